"""The skeleton registry: name -> program, parameters with defaults, rank count.

A skeleton module defines ``main(**params)`` (an mpi4py-style program) and
registers it::

    SKELETON = register(Skeleton(
        name="halo2d", main=main, description="...",
        params={"px": Param(32, "process columns"), ...},
        ranks=lambda p: p["px"] * p["py"]))

``bsim run NAME --param k=v`` looks it up here.  A skeleton whose parameters
decide where ranks run (MILC's ``layout``) also gives ``mapping``: a function
of the resolved parameters returning a rank->node mapping spec (or None),
which ``bsim run`` sets as the network model's ``mapping``
(:func:`bsim.cli.targets.apply_mapping`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Param", "Skeleton", "register", "get", "names", "BUILTIN_MODULES"]

# modules imported on first lookup so that their skeletons register themselves
BUILTIN_MODULES = ["skeletons.halo2d", "skeletons.sweep3d", "skeletons.milc", "skeletons.hpl",
                   "skeletons.phase"]


@dataclass(frozen=True)
class Param:
    """A skeleton parameter: default value (its type is the parameter's type) and help."""

    default: Any
    help: str = ""


@dataclass(frozen=True)
class Skeleton:
    """A registered skeleton program."""

    name: str
    main: Callable[..., Any]
    description: str
    params: dict[str, Param] = field(default_factory=dict)
    ranks: Callable[[dict[str, Any]], int] | None = None
    mapping: Callable[[dict[str, Any]], str | None] | None = None
    """Resolved parameters -> rank->node mapping spec for the network model, or None."""
    machine_param: tuple[str, str] | None = None
    """(parameter, kernels table): ``bsim run --machine M`` sets the parameter to M when
    M's profile has ``[kernels.<table>]`` and the user did not set the parameter."""

    def resolve(self, given: dict[str, Any]) -> dict[str, Any]:
        """Defaults overridden by *given*; unknown names raise listing the valid ones."""
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            valid = ", ".join(sorted(self.params))
            raise ValueError(f"skeleton {self.name!r}: unknown parameter(s) "
                             f"{', '.join(unknown)}; valid: {valid}")
        out = {k: p.default for k, p in self.params.items()}
        for k, v in given.items():
            out[k] = _coerce(self.name, k, v, self.params[k].default)
        return out

    def describe(self) -> str:
        """Name, description and parameters with defaults, for ``bsim list skeletons``."""
        lines = [f"{self.name}: {self.description}"]
        for k, p in self.params.items():
            lines.append(f"    {k:<16} {p.default!r:<14} {p.help}")
        return "\n".join(lines)


def _coerce(skel: str, key: str, value: Any, default: Any) -> Any:
    if not isinstance(value, str) or isinstance(default, str) or default is None:
        return value
    try:
        if isinstance(default, bool):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError:
        raise ValueError(f"skeleton {skel!r}: parameter {key}={value!r} is not a "
                         f"{type(default).__name__}") from None
    return value


_REGISTRY: dict[str, Skeleton] = {}
_loaded = False


def register(skeleton: Skeleton) -> Skeleton:
    """Add *skeleton* to the registry (names are unique)."""
    if skeleton.name in _REGISTRY and _REGISTRY[skeleton.name].main is not skeleton.main:
        raise ValueError(f"skeleton {skeleton.name!r} registered twice")
    _REGISTRY[skeleton.name] = skeleton
    return skeleton


def _load_builtins() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for mod in BUILTIN_MODULES:
            try:
                importlib.import_module(mod)
            except ModuleNotFoundError as exc:
                if exc.name != mod:   # only a skeleton module that does not exist yet is skipped
                    raise


def get(name: str) -> Skeleton:
    """The skeleton registered as *name*; raises ``KeyError`` listing valid names."""
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown skeleton {name!r}; registered: {', '.join(names())}") from None


def names() -> list[str]:
    """Registered skeleton names, sorted."""
    _load_builtins()
    return sorted(_REGISTRY)
