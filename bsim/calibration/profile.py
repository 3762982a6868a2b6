"""Machine profiles: read, merge and write the preset TOML schema of ``docs/machines.md``.

A calibrated profile is a machine preset (``bsim.machines.load_machine``
reads it like ``bgp.toml``).  Each calibration command updates only its own
part of the file and keeps the rest:

* ``calibrate network``: the top-level keys if absent, ``[network]``, the
  ``[network_variants.*]`` it measured (``hockney_intra``, ``piecewise_inter``,
  ``loggp_intra_small``...), and ``calibration_*`` keys of ``[hardware]``; the
  variants and keys it owns but did not produce this time (an earlier run's
  ``loggp_inter_small`` after a run on one node or with ``--no-stream``) are
  removed, so nothing stale sits under the new run's metadata;
* ``calibrate collectives``: ``[collectives]`` (``model = "table"``);
* ``fit kernel``: one entry ``[kernels.APP] KERNEL = {...}``.

A file that only holds kernels is not yet a valid machine (no ``[network]``);
``calibrate network`` completes it.  Files are rewritten atomically.  An existing
file is updated with tomlkit (a style-preserving TOML library, in the ``fit`` and
``mpi`` extras): the user's comments, order and formatting outside what the command
writes are kept.  Without tomlkit, or for a new file, the whole file is written
from the values with generated comments.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..outputs.files import atomic_write_text
from .errors import CalibrationError

__all__ = ["read_profile", "dumps_toml", "write_profile", "update_profile"]

_TOP_ORDER = ("name", "description", "source", "cores_per_node")
_TABLE_ORDER = ("network", "network_variants", "collectives", "kernels", "hardware")


def read_profile(path: str | Path) -> dict[str, Any]:
    """The parsed TOML of *path*, or ``{}`` if it does not exist."""
    p = Path(path)
    if not p.exists():
        return {}
    try:
        with p.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise CalibrationError(f"profile {str(p)!r} is not valid TOML: {exc}") from None


def _value(v: Any, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise CalibrationError(f"profile: {where} = {v!r}: TOML values here must be finite")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)             # JSON's escapes are a subset of TOML's basic strings
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, where) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x, f'{where}.{k}')}"
                                for k, x in v.items()) + " }"
    raise CalibrationError(f"profile: {where}: cannot write {type(v).__name__} {v!r}")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)


def _line(key: str, value: Any, where: str, comments: Mapping[str, str]) -> str:
    text = f"{_key(key)} = {_value(value, where)}"
    note = comments.get(where)
    return f"{text:<40} # {note}" if note else text


_CONTAINERS = ("network_variants", "kernels")


def _table(path: list[str], table: Mapping[str, Any], comments: Mapping[str, str],
           out: list[str]) -> None:
    """``[a.b]`` with its values; entries of the container tables (``network_variants``,
    ``kernels``) become sub-tables, other nested tables are written inline."""
    dotted = ".".join(path)
    nested = len(path) == 1 and path[0] in _CONTAINERS
    subtables = [(k, v) for k, v in table.items() if nested and isinstance(v, Mapping)]
    plain = [(k, v) for k, v in table.items() if not (nested and isinstance(v, Mapping))]
    if plain or not subtables:
        out.append("")
        if dotted in comments:
            out.append(f"# {comments[dotted]}")
        out.append(f"[{'.'.join(_key(p) for p in path)}]")
        out.extend(_line(k, v, f"{dotted}.{k}", comments) for k, v in plain)
    for key, value in subtables:
        _table([*path, key], value, comments, out)


def dumps_toml(data: Mapping[str, Any], comments: Mapping[str, str] | None = None,
               header: str = "") -> str:
    """TOML text of a profile dict: top-level keys first, then the tables in schema order.

    *comments* maps dotted keys (``"network.latency"``) or table names
    (``"network_variants.loggp_intra_small"``) to an end-of-line or
    above-the-header comment.
    """
    notes = dict(comments or {})
    out = [f"# {ln}" if ln else "#" for ln in header.splitlines()]
    tops = [k for k in _TOP_ORDER if k in data] + sorted(
        k for k, v in data.items() if k not in _TOP_ORDER and not isinstance(v, Mapping))
    out += [_line(k, data[k], k, notes) for k in tops]
    tables = [k for k in _TABLE_ORDER if k in data] + [
        k for k, v in data.items() if k not in _TABLE_ORDER and isinstance(v, Mapping)]
    for key in tables:
        if not isinstance(data[key], Mapping):
            raise CalibrationError(f"profile: {key!r} must be a table, got {data[key]!r}")
        _table([key], data[key], notes, out)
    return "\n".join(out).lstrip("\n") + "\n"


def write_profile(path: str | Path, data: Mapping[str, Any],
                  comments: Mapping[str, str] | None = None) -> Path:
    """Write *data* to *path* atomically; the text is re-parsed first as a check."""
    text = dumps_toml(data, comments, header="Machine profile written by bsim calibrate / "
                      "bsim fit (docs/calibration.md).\nSchema: docs/machines.md.")
    tomllib.loads(text)
    return atomic_write_text(path, text)


def update_profile(path: str | Path, *, top: Mapping[str, Any] | None = None,
                   top_defaults: Mapping[str, Any] | None = None,
                   tables: Mapping[str, Any] | None = None,
                   subtables: Mapping[str, Mapping[str, Any]] | None = None,
                   comments: Mapping[str, str] | None = None,
                   remove: Mapping[str, Iterable[str]] | None = None) -> dict[str, Any]:
    """Merge into the profile at *path* (created if missing) and write it back.

    *top* sets top-level keys, *top_defaults* sets them only if absent,
    *tables* replaces whole tables (``{"network": {...}}``), *subtables*
    updates entries inside tables (``{"network_variants": {"hockney_intra":
    {...}}}``, ``{"kernels.jacobi2d": {"sweep": {...}}}``), *remove* deletes
    entries of tables first (``{"network_variants": ["piecewise_inter"]}``: what
    the command owns but did not produce this time; absent ones are fine).
    Returns the new profile dict.
    """
    data = read_profile(path)
    _remove(data, remove)
    for key, value in (top_defaults or {}).items():
        data.setdefault(key, value)
    data.update(top or {})
    for key, value in (tables or {}).items():
        data[key] = dict(value)
    for dotted, entries in (subtables or {}).items():
        node = data
        for part in dotted.split("."):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise CalibrationError(f"profile {str(path)!r}: {dotted!r} is not a table")
        node.update(entries)
    if Path(path).exists() and _preserve(path, data, top, top_defaults, tables, subtables,
                                          comments, remove):
        return data
    write_profile(path, data, comments)
    return data


def _remove(data: Any, remove: Mapping[str, Iterable[str]] | None) -> None:
    """Delete *remove*'s entries from *data* (a dict or a tomlkit document)."""
    for dotted, keys in (remove or {}).items():
        node = data
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, MutableMapping):
            for key in keys:
                if key in node:
                    del node[key]


def _preserve(path: str | Path, data: Mapping[str, Any], top: Any, top_defaults: Any,
              tables: Any, subtables: Any, comments: Mapping[str, str] | None,
              remove: Mapping[str, Iterable[str]] | None = None) -> bool:
    """Apply the same update to the existing file's text with tomlkit, keeping everything
    else (the user's comments, order, formatting); False when tomlkit is missing."""
    try:
        import tomlkit
    except ImportError:
        return False
    notes = dict(comments or {})
    doc = tomlkit.parse(Path(path).read_text(encoding="utf-8"))
    _remove(doc, remove)
    for key, value in (top_defaults or {}).items():
        if key not in doc:
            doc[key] = value
    for key, value in (top or {}).items():
        doc[key] = value
    for key, value in (tables or {}).items():
        doc[key] = _tk_table(tomlkit, value, key, notes, container=key in _CONTAINERS)
    for dotted, entries in (subtables or {}).items():
        parts = dotted.split(".")
        node: Any = doc
        for part in parts:
            if part not in node:
                node[part] = tomlkit.table(is_super_table=True)
            node = node[part]
        for key, value in entries.items():
            where = f"{dotted}.{key}"
            if isinstance(value, Mapping) and len(parts) == 1 and parts[0] in _CONTAINERS:
                node[key] = _tk_table(tomlkit, value, where, notes, container=False)
            else:
                node[key] = _tk_value(tomlkit, value)
                if where in notes:
                    node[key].comment(notes[where])
    text = tomlkit.dumps(doc)
    if tomllib.loads(text) != _plain(data):
        return False     # tomlkit could not express the update exactly: regenerate instead
    atomic_write_text(path, text)
    return True


def _tk_value(tomlkit: Any, value: Any) -> Any:
    if isinstance(value, Mapping):
        table = tomlkit.inline_table()
        table.update({k: _tk_value(tomlkit, v) for k, v in value.items()})
        return table
    return tomlkit.item(value)


def _tk_table(tomlkit: Any, value: Mapping[str, Any], where: str, notes: Mapping[str, str],
              container: bool) -> Any:
    table = tomlkit.table(is_super_table=container)
    if where in notes:
        table.comment(notes[where])
    for key, item in value.items():
        sub = f"{where}.{key}"
        if container and isinstance(item, Mapping):
            table[key] = _tk_table(tomlkit, item, sub, notes, container=False)
        else:
            table[key] = _tk_value(tomlkit, item)
            if sub in notes:
                table[key].comment(notes[sub])
    return table


def _plain(data: Mapping[str, Any]) -> dict[str, Any]:
    """*data* as TOML would read it back (tuples as lists)."""
    return tomllib.loads(dumps_toml(data))
