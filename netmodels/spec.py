"""The spec-string grammar of every model chosen by name, and building networks from it.

One grammar for networks (``hockney:latency=1e-6,bandwidth=1e9``), protocols
(``loggp:eager_limit=4096``), collective models (``clog:c=1e-6,d=2e-6``),
noise (``periodic:period=1e-3,duration=2e-5``) and mappings
(``roundrobin:nodes=4``); :func:`netmodels.base.build_network` builds networks::

    spec   := NAME [ ":" item { "," item } ]
    item   := KEY "=" VALUE

NAME is case-insensitive; blank items are skipped.  :func:`split_spec` returns
the raw strings; :func:`parse_spec` also types each value with
:func:`parse_value` (``true``/``false`` -> bool, then int, then float, else the
string: ``16x16x16``, ``a/b/c`` lists and file paths stay strings for the model
to read).  Each owner checks names and keys against its
:class:`~netmodels.registry.Registry`; every error is a :class:`SpecError`
(a ``ValueError``) naming the spec, the item and what was expected.  A value
may not contain a comma; mapping specs may also separate items with ``;``
(``nodevolume:grid=4x4x4x4;node=2x2x1x1``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SpecError", "split_spec", "parse_value", "parse_spec"]


class SpecError(ValueError):
    """A spec string is malformed, or names a model or parameter that does not exist."""


def parse_value(text: str) -> Any:
    """Parse one spec value: int, float, bool, else the stripped string."""
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def split_spec(spec: str, what: str = "spec", error: type[Exception] = SpecError,
               separators: str = ",") -> tuple[str, dict[str, str]]:
    """``NAME:KEY=VALUE,...`` -> ``(name, {key: raw value})``; the name lowercased.

    *what* names the spec in errors (``"network spec"``); *error* is raised for
    an item that is not ``KEY=VALUE``; *separators* are the item separators.
    """
    name, _, rest = spec.strip().partition(":")
    for sep in separators[1:]:
        rest = rest.replace(sep, separators[0])
    items: dict[str, str] = {}
    for item in rest.split(separators[0]):
        if not item.strip():
            continue
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise error(f"{what} {spec!r}: expected KEY=VALUE, got {item!r}")
        if key.strip() in items:   # which one was meant? (the last silently won before)
            raise error(f"{what} {spec!r}: {key.strip()} given twice")
        items[key.strip()] = value.strip()
    return name.strip().lower(), items


def parse_spec(spec: str, what: str = "spec",
               error: type[Exception] = SpecError) -> tuple[str, dict[str, Any]]:
    """:func:`split_spec` with every value typed by :func:`parse_value`."""
    name, items = split_spec(spec, what, error)
    return name, {k: parse_value(v) for k, v in items.items()}
