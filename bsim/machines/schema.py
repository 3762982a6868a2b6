"""The schema of a machine file, checked when it is loaded (``docs/machines.md``, "Schema").

Hand checks rather than a validation library: the schema is small, and each
error must name the file, the key, what was expected and what was found, in
one line.  Unknown keys are errors (a misspelt key would otherwise be
ignored), with the closest valid name suggested.
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Any

__all__ = ["check_machine_file", "check_network", "MachineError", "NETWORK_MODELS"]


class MachineError(ValueError):
    """A machine preset is unknown or malformed."""


NETWORK_MODELS = ("hockney", "loggp", "zero", "torus", "fattree", "bluewaters", "piecewise")
"""Model names a ``[network]`` table may use (plus every later-registered model)."""

REQUIRED = {"name": str, "description": str, "source": str, "cores_per_node": int,
            "network": dict}
OPTIONAL_TABLES = ("collectives", "kernels", "network_variants", "hardware", "filesystem")
HARDWARE_NUMBERS = ("peak_flops_per_core", "memory_bandwidth_per_node")


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            dict: "a table", list: "an array"}.get(type(value), type(value).__name__)


def _unknown(where: str, key: str, valid: list[str]) -> MachineError:
    near = difflib.get_close_matches(key, valid, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return MachineError(f"{where}: unknown key {key!r}{hint}; valid: {', '.join(valid)}")


def check_machine_file(data: dict[str, Any], path: Path) -> None:
    """Raise :class:`MachineError` for the first thing *data* (parsed *path*) gets wrong."""
    where = f"machine file {str(path)!r}"
    valid = list(REQUIRED) + list(OPTIONAL_TABLES)
    for key in data:
        if key not in valid:
            raise _unknown(where, key, valid)
    for key, kind in REQUIRED.items():
        if key not in data:
            raise MachineError(f"{where}: missing key {key!r} ({_kind(kind())} expected)")
        value = data[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise MachineError(f"{where}: {key!r} must be {_kind(kind())}, found "
                               f"{_kind(value)} {value!r}")
    if data["cores_per_node"] < 1:
        raise MachineError(f"{where}: cores_per_node must be >= 1, found "
                           f"{data['cores_per_node']}")
    for key in OPTIONAL_TABLES:
        if key in data and not isinstance(data[key], dict):
            raise MachineError(f"{where}: {key!r} must be a table ([{key}]), found "
                               f"{_kind(data[key])}")
    tables = {"[network]": data["network"]}
    tables.update({f"[network_variants.{v}]": t
                   for v, t in data.get("network_variants", {}).items()})
    for label, table in tables.items():
        check_network(table, f"{path.name}: {label}")
        cores = table.get("cores")
        if cores is not None and (not isinstance(cores, int) or isinstance(cores, bool)
                                  or not 1 <= cores <= data["cores_per_node"]):
            raise MachineError(f"{where}: {label} cores = {cores!r} ranks per node, but a "
                               f"node has cores_per_node = {data['cores_per_node']}")
    for name, table in data.get("kernels", {}).items():
        if not isinstance(table, dict):
            raise MachineError(f"{where}: [kernels.{name}] must be a table, found "
                               f"{_kind(table)} {table!r}")
    if "filesystem" in data:
        _check_filesystem(data["filesystem"], f"{where}: [filesystem]")
    for key in HARDWARE_NUMBERS:
        value = data.get("hardware", {}).get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value <= 0):
            raise MachineError(f"{where}: [hardware] {key} must be a positive number, found "
                               f"{_kind(value)} {value!r}")


def _check_filesystem(table: dict[str, Any], where: str) -> None:
    """``[filesystem]``: a string ``model`` and that model's parameters (docs/io.md)."""
    from netmodels.filesystem import build_filesystem
    model = table.get("model")
    if not isinstance(model, str):
        raise MachineError(f"{where}: missing string key 'model'")
    try:
        build_filesystem(filesystem_table_spec(table))
    except ValueError as exc:
        raise MachineError(f"{where}: {exc}") from None


def filesystem_table_spec(table: dict[str, Any]) -> str:
    """The spec string of a ``[filesystem]`` table: ``model:key=value,...``."""
    items = ",".join(f"{k}={v!r}" for k, v in table.items() if k != "model")
    return f"{table['model']}:{items}" if items else str(table["model"])


def _network_models() -> tuple[str, ...]:
    """Every registered network model name (the static list plus later registrations)."""
    try:
        import netmodels
        return tuple(sorted(set(NETWORK_MODELS) | set(netmodels.REGISTRY)))
    except ImportError:  # pragma: no cover - netmodels ships with bsim
        return NETWORK_MODELS


def check_network(table: Any, where: str) -> None:
    """A network table: a string ``model`` naming a registered model, scalar values."""
    if not isinstance(table, dict):
        raise MachineError(f"{where}: expected a table, found {_kind(table)}")
    model = table.get("model")
    if not isinstance(model, str):
        raise MachineError(f"{where}: missing string key 'model'")
    valid = _network_models()
    if model not in valid:
        raise MachineError(f"{where}: unknown model {model!r}; valid: {', '.join(valid)}")
    for key, value in table.items():
        if key == "model":
            continue
        if not isinstance(value, (bool, int, float, str)):
            raise MachineError(f"{where}.{key}: values must be numbers, booleans or strings, "
                               f"found {_kind(value)} {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise MachineError(f"{where}.{key}: value must be finite, found {value!r}")
        if isinstance(value, str) and "," in value:   # nested specs use ';' between keys
            raise MachineError(f"{where}.{key}: string {value!r} may not contain ','")
