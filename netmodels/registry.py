"""One way to register things by name: networks, protocols, collective models, mappings, skeletons.

A :class:`Registry` is a ``dict`` from name to the registered item (a class or
an object with a ``name``), with a decorator to add to it and a lookup whose
error lists what is valid::

    NETWORKS = Registry("network model", NetworkSpecError)

    @NETWORKS.register
    class Hockney(NetworkModel):
        name = "hockney"
        ...

    NETWORKS.lookup("hockney")      # -> Hockney
    NETWORKS.lookup("hocknee")      # NetworkSpecError: unknown network model 'hocknee';
                                    #   valid: hockney, loggp, ...

Items are built from spec strings (``NAME:KEY=VALUE,...``, :mod:`netmodels.spec`)
by the module that owns the registry; :meth:`Registry.check_keys` gives every
one the same error for an unknown parameter.  It is a dict, so ``name in R``,
``R[name]``, ``sorted(R)`` and ``R.items()`` work as they always did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from .spec import SpecError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(dict[str, T]):
    """Named items of one *kind* (``"network model"``); lookups raise *error*."""

    def __init__(self, kind: str, error: type[Exception] = SpecError,
                 items: Iterable[T] = ()) -> None:
        super().__init__()
        self.kind = kind
        self.error = error
        for item in items:
            self.register(item)

    def register(self, item: T) -> T:
        """Add *item* under its ``name`` (usable as a class decorator); twice is an error."""
        name: str = getattr(item, "name")   # noqa: B009 (T is any class or object)
        if name in self and self[name] is not item:
            raise ValueError(f"{self.kind} {name!r} registered twice")
        self[name] = item
        return item

    def lookup(self, name: str) -> T:
        """The item called *name*; *error* listing the valid names if there is none."""
        try:
            return self[name]
        except KeyError:
            raise self.error(f"unknown {self.kind} {name!r}; valid: "
                             f"{', '.join(sorted(self))}") from None

    def check_keys(self, name: str, keys: Iterable[str], parameters: dict[str, str]) -> None:
        """Raise *error* naming the unknown keys of a spec for item *name*, and the valid ones."""
        unknown = sorted(set(keys) - set(parameters))
        if unknown:
            valid = ", ".join(f"{k} ({v})" for k, v in parameters.items()) or "none"
            raise self.error(f"{self.kind} {name!r}: unknown parameter(s) "
                             f"{', '.join(unknown)}; valid: {valid}")

    def describe(self, first_line: Callable[[Any], str] | None = None) -> str:
        """One block per item, sorted: ``name: first docstring line`` then its parameters."""
        lines = []
        for name in sorted(self):
            item = self[name]
            doc = first_line(item) if first_line else \
                ((item.__doc__ or "").strip().splitlines() or [""])[0]
            lines.append(f"{name}: {doc}")
            for key, text in getattr(item, "parameters", {}).items():
                lines.append(f"    {key:<14} {text}")
        return "\n".join(lines)
