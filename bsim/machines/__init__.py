"""Machine presets: the machines of the papers as TOML data.

Each ``<name>.toml`` beside this module describes one machine (schema in
``docs/machines.md``)::

    >>> m = load_machine("bgp")
    >>> m.cores_per_node
    4
    >>> network_spec(m)
    'hockney:latency=9.8e-06,bandwidth=589824000'
    >>> network_spec(m, "p2048")              # a per-P effective fit
    'hockney:latency=1.64e-05,bandwidth=214958080'

:func:`network_spec` turns a ``[network]`` table into the spec string that
:func:`netmodels.build_network` accepts (``"model:k=v,..."``);
:func:`collective_spec` turns ``[collectives]`` into the one
:func:`netmodels.collective_costs.build_collective_model` accepts.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "MACHINE_DIR", "NETWORK_MODELS", "Machine", "MachineError",
    "collective_spec", "list_machines", "load_machine", "network_spec",
]

MACHINE_DIR = Path(__file__).resolve().parent
"""Directory holding the preset TOML files."""

NETWORK_MODELS = ("hockney", "loggp", "zero", "torus", "fattree", "bluewaters", "piecewise")
"""Model names a ``[network]`` table may use."""

_REQUIRED = {"name": str, "description": str, "source": str, "cores_per_node": int,
             "network": dict}
_OPTIONAL_TABLES = ("collectives", "kernels", "network_variants", "hardware")


class MachineError(ValueError):
    """A machine preset is unknown or malformed."""


@dataclass(frozen=True)
class Machine:
    """One machine preset, as loaded from its TOML file.

    ``network``, ``collectives`` and ``kernels`` are the file's tables of the
    same names (``collectives`` and ``kernels`` are ``{}`` when absent);
    ``raw`` is the whole parsed file, including ``network_variants`` and
    ``hardware``.
    """

    name: str
    description: str
    source: str
    cores_per_node: int
    network: dict[str, Any]
    collectives: dict[str, Any] = field(default_factory=dict)
    kernels: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    path: Path | None = field(default=None, repr=False)
    """The file it was read from (relative paths inside it resolve against its folder)."""

    @property
    def network_variants(self) -> dict[str, dict[str, Any]]:
        """Alternative network tables by name (per-P effective fits, topologies...)."""
        return dict(self.raw.get("network_variants", {}))

    @property
    def hardware(self) -> dict[str, Any]:
        """Free-form hardware facts (clock, caches, measured link figures)."""
        return dict(self.raw.get("hardware", {}))

    def __repr__(self) -> str:
        return (f"<Machine {self.name} cores_per_node={self.cores_per_node} "
                f"network={self.network.get('model')}>")


def list_machines() -> list[str]:
    """Names of the bundled presets, sorted."""
    return sorted(p.stem for p in MACHINE_DIR.glob("*.toml"))


def _resolve(name_or_path: str | Path) -> Path:
    text = str(name_or_path)
    path = Path(text)
    if text.endswith(".toml") or path.parent != Path("."):
        if not path.is_file():
            raise MachineError(f"machine file {text!r} does not exist")
        return path
    candidate = MACHINE_DIR / f"{text.lower()}.toml"
    if not candidate.is_file():
        valid = ", ".join(list_machines())
        raise MachineError(f"unknown machine {text!r}; valid machines: {valid}")
    return candidate


def _network_models() -> tuple[str, ...]:
    """Every registered network model name (the static list plus later registrations)."""
    try:
        import netmodels
        return tuple(sorted(set(NETWORK_MODELS) | set(netmodels.REGISTRY)))
    except ImportError:  # pragma: no cover - netmodels ships with bsim
        return NETWORK_MODELS


def _check_network(table: Any, where: str) -> None:
    if not isinstance(table, dict):
        raise MachineError(f"{where}: expected a table, got {type(table).__name__}")
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
                               f"got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise MachineError(f"{where}.{key}: value must be finite, got {value!r}")
        if isinstance(value, str) and "," in value:   # nested specs use ';' between keys
            raise MachineError(f"{where}.{key}: string {value!r} may not contain ','")


def load_machine(name_or_path: str | Path) -> Machine:
    """Load a preset by name (``"bgp"``) or from a ``.toml`` path.

    Raises :class:`MachineError` for an unknown name (listing the valid ones),
    a missing file, invalid TOML, a missing or mistyped required key, or a
    network table with an unknown model or non-scalar values.
    """
    path = _resolve(name_or_path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise MachineError(f"machine file {str(path)!r} is not valid TOML: {exc}") from None
    for key, kind in _REQUIRED.items():
        if key not in data:
            raise MachineError(f"machine file {str(path)!r}: missing key {key!r}")
        value = data[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise MachineError(f"machine file {str(path)!r}: {key!r} must be "
                               f"{kind.__name__}, got {value!r}")
    if data["cores_per_node"] < 1:
        raise MachineError(f"machine file {str(path)!r}: cores_per_node must be >= 1, "
                           f"got {data['cores_per_node']}")
    for key in _OPTIONAL_TABLES:
        if key in data and not isinstance(data[key], dict):
            raise MachineError(f"machine file {str(path)!r}: {key!r} must be a table")
    _check_network(data["network"], f"{path.name}: [network]")
    for vname, table in data.get("network_variants", {}).items():
        _check_network(table, f"{path.name}: [network_variants.{vname}]")
    return Machine(
        name=data["name"], description=data["description"], source=data["source"],
        cores_per_node=data["cores_per_node"], network=dict(data["network"]),
        collectives=dict(data.get("collectives", {})), kernels=dict(data.get("kernels", {})),
        raw=data, path=path,
    )


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def network_spec(machine: Machine | str | Path, variant: str | None = None) -> str:
    """The ``"model:k=v,..."`` spec string of a machine's network.

    *machine* is a :class:`Machine` or anything :func:`load_machine` accepts;
    *variant* picks a table of ``[network_variants]`` instead of
    ``[network]`` (unknown variants raise :class:`MachineError` listing the
    valid ones).  Keys keep their file order.
    """
    m = machine if isinstance(machine, Machine) else load_machine(machine)
    if variant is None:
        table = m.network
    else:
        variants = m.network_variants
        if variant not in variants:
            valid = ", ".join(sorted(variants)) or "none"
            raise MachineError(f"machine {m.name!r} has no network variant {variant!r}; "
                               f"valid: {valid}")
        table = variants[variant]
    args = ",".join(f"{k}={_format(v)}" for k, v in table.items() if k != "model")
    return f"{table['model']}:{args}" if args else str(table["model"])


def collective_spec(machine: Machine | str | Path) -> str | None:
    """The collective-model spec of a machine's ``[collectives]``, or None if absent.

    ``model = "clog"`` with per-op tables ``allreduce = { c = .., d = .. }``
    gives ``"clog:allreduce.c=..,allreduce.d=.."``; top-level ``c``/``d``
    keys apply to every op.  Other scalar keys pass through as ``key=value``.
    Raises :class:`MachineError` for a table without a string ``model``.
    """
    m = machine if isinstance(machine, Machine) else load_machine(machine)
    table = m.collectives
    if not table:
        return None
    model = table.get("model")
    if not isinstance(model, str):
        raise MachineError(f"machine {m.name!r}: [collectives] needs a string 'model'")
    args: list[str] = []
    for key, value in table.items():
        if key == "model":
            continue
        if isinstance(value, dict):
            args.extend(f"{key}.{k}={_format(v)}" for k, v in value.items())
        elif key == "path" and m.path is not None and not Path(str(value)).is_absolute():
            args.append(f"path={(m.path.parent / str(value)).resolve()}")   # next to the file
        else:
            args.append(f"{key}={_format(value)}")
    return f"{model}:{','.join(args)}" if args else model
