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

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "MACHINE_DIR", "NETWORK_MODELS", "Machine", "MachineError",
    "collective_spec", "list_machines", "load_machine", "network_spec", "split_variant",
    "filesystem_spec", "naming_the_file",
]

from netmodels.input_files import note_input

from .schema import (
    MEMORY_BANDWIDTH,
    NETWORK_MODELS,
    NODE_NETWORK_KEYS,
    PEAK,
    RANKS_PER_NODE,
    MachineError,
    check_machine_file,
)

MACHINE_DIR = Path(__file__).resolve().parent
"""Directory holding the preset TOML files."""




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
    variant: str | None = None
    """The ``[network_variants]`` table chosen with ``NAME:VARIANT`` (None: ``[network]``)."""

    @property
    def spec(self) -> str:
        """``name`` or ``name:variant``: what a result records as its machine."""
        return f"{self.name}:{self.variant}" if self.variant else self.name

    @property
    def recorded(self) -> str:
        """What a result records as its machine: :attr:`spec` for a bundled preset; for a
        user's file also its path, ``"vm (/home/me/net.toml)"``, since two profiles made
        on one host carry one name."""
        if self.path is None or self.path.parent == MACHINE_DIR:
            return self.spec
        return f"{self.spec} ({self.path})"

    @property
    def label(self) -> str:
        """How an error names it: ``machine 'bgp:p64'`` for a bundled preset, ``machine file
        'mine.toml'`` (with ``:variant``) for a user's file, which the user named by its
        path, not by the ``name`` inside it."""
        if self.path is None or self.path.parent == MACHINE_DIR:
            return f"machine {self.spec!r}"
        where = f"{self.path}:{self.variant}" if self.variant else str(self.path)
        return f"machine file {where!r}"

    @property
    def node(self) -> dict[str, Any]:
        """``[node]``: the node's devices and NICs (``{}`` when the file has none)."""
        return dict(self.raw.get("node", {}))

    @property
    def devices_per_node(self) -> int:
        """``[node] devices`` (GPUs or CPU sockets a node), else 1."""
        return int(self.node.get("devices", 1))

    @property
    def peak_flops_per_core(self) -> float | None:
        """``[hardware] peak_flops_per_core`` (flop/s), else ``[node]
        peak_flops_per_device * devices / cores_per_node`` (a rank slot's share of its
        device), or None when the file gives neither."""
        value = self.raw.get("hardware", {}).get(PEAK)
        if value is None and "peak_flops_per_device" in self.node:
            return (float(self.node["peak_flops_per_device"]) * self.devices_per_node
                    / self.cores_per_node)
        return None if value is None else float(value)

    def node_make_up(self) -> str:
        """One line: the node's devices and NICs, as ``bsim list machines`` and a run's
        summary state them (``""`` for a file without ``[node]``)."""
        node = self.node
        if not node:
            return ""
        d = self.devices_per_node
        figures = []
        if "peak_flops_per_device" in node:
            figures.append(f"{float(node['peak_flops_per_device']) / 1e12:.4g} TFlop/s")
        if "memory_bandwidth_per_device" in node:
            figures.append(f"{float(node['memory_bandwidth_per_device']) / 1e9:.4g} GB/s")
        what = node.get("device", "device")
        kind = node.get("kind", "cpu")
        text = f"{d} x {what} ({kind}{', ' if figures else ''}{', '.join(figures)})"
        k = int(node.get("nics", 1))
        nic = node.get("nic", "NIC")
        bw = node.get("nic_bandwidth")
        text += f", {k} x {nic}" + (f" ({float(bw) / 1e9:.4g} GB/s)" if bw else "")
        if k > 1:
            text += f", NIC by {node.get('nic_policy', 'device')}"
        return text

    @property
    def ranks_per_node(self) -> int:
        """Ranks the chosen network places per node: its ``cores`` or ``ranks_per_node``
        (:data:`~bsim.machines.schema.RANKS_PER_NODE`, for a model without ``cores``),
        else ``cores_per_node``."""
        table = self.network_variants[self.variant] if self.variant else self.network
        cores = table.get("cores", table.get(RANKS_PER_NODE))
        return int(cores) if isinstance(cores, int) else self.cores_per_node

    @property
    def peak_flops_per_rank(self) -> float | None:
        """A rank's share of its node's peak: ``peak_flops_per_core * cores_per_node /
        ranks_per_node`` (one rank per node owns the whole node), or None."""
        peak = self.peak_flops_per_core
        return None if peak is None else peak * self.cores_per_node / self.ranks_per_node

    @property
    def memory_bandwidth_per_core(self) -> float | None:
        """``[hardware] memory_bandwidth_per_node / cores_per_node`` (bytes/s), else ``[node]
        memory_bandwidth_per_device * devices / cores_per_node``, or None."""
        value = self.raw.get("hardware", {}).get(MEMORY_BANDWIDTH)
        if value is None and "memory_bandwidth_per_device" in self.node:
            value = float(self.node["memory_bandwidth_per_device"]) * self.devices_per_node
        return None if value is None else float(value) / self.cores_per_node

    @property
    def network_variants(self) -> dict[str, dict[str, Any]]:
        """Alternative network tables by name (per-P effective fits, topologies...)."""
        return dict(self.raw.get("network_variants", {}))

    @property
    def hardware(self) -> dict[str, Any]:
        """Free-form hardware facts (clock, caches, measured link figures)."""
        return dict(self.raw.get("hardware", {}))

    def __repr__(self) -> str:
        return (f"<Machine {self.spec} cores_per_node={self.cores_per_node} "
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


def split_variant(text: str | Path) -> tuple[str | Path, str | None]:
    """``"power5:p1024"`` -> ``("power5", "p1024")``; a name or path alone -> ``(it, None)``.

    The part after the last ``:`` is a variant when the part before it is a
    preset name or an existing file (so a path with a ``:`` still loads).
    """
    if isinstance(text, Path) or ":" not in text:
        return text, None
    base, _, variant = text.rpartition(":")
    if base.lower() in list_machines() or Path(base).is_file():
        return base, variant
    return text, None


def load_machine(name_or_path: str | Path, record: bool = True) -> Machine:
    """Load a preset by name (``"bgp"``), from a ``.toml`` path, either with ``:VARIANT``.

    ``"power5:p1024"`` selects ``[network_variants.p1024]`` as the network.
    Raises :class:`MachineError` for an unknown name (listing the valid ones),
    an unknown variant (listing the file's), a missing file, invalid TOML, a
    missing or mistyped required key, a network table with an unknown model or
    non-scalar values, or a hardware figure that is not a positive number.  The file is
    recorded in the run's ``inputs`` by content (*record* False: a read that does not
    shape a prediction, such as a module's default taken from a preset at import).
    """
    name_or_path, variant = split_variant(name_or_path)
    path = _resolve(name_or_path)
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise MachineError(f"machine file {str(path)!r} is not valid TOML: {exc}") from None
    check_machine_file(data, path)
    # by content, a bundled preset too: its tables change while bsim's version may not
    if record:
        note_input("preset" if path.parent == MACHINE_DIR else "machine", path, raw)
    if variant is not None and variant not in data.get("network_variants", {}):
        valid = ", ".join(sorted(data.get("network_variants", {}))) or "none"
        where = (f"machine {data['name']!r}" if path.parent == MACHINE_DIR
                 else f"machine file {str(path)!r}")   # as the user named it
        raise MachineError(f"{where} has no network variant {variant!r}; valid: {valid}")
    return Machine(
        name=data["name"], description=data["description"], source=data["source"],
        cores_per_node=data["cores_per_node"], network=dict(data["network"]),
        collectives=dict(data.get("collectives", {})), kernels=dict(data.get("kernels", {})),
        raw=data, path=path, variant=variant,
    )


@contextmanager
def naming_the_file(machine: Machine, table: str) -> Iterator[None]:
    """Re-raise a bad value found while building *machine*'s ``[table]`` (a ``ValueError``
    from the network, collective or file-system model) naming the machine file."""
    try:
        yield
    except ValueError as exc:
        raise type(exc)(f"machine file {str(machine.path)!r} [{table}]: {exc}") from None


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def filesystem_spec(machine: Machine | str | Path) -> str | None:
    """The MPI-IO file-system spec of a machine's ``[filesystem]`` (``docs/io.md``), or
    None if it has none: ``model = "lustre"`` and that model's parameters."""
    from .schema import filesystem_table_spec
    m = machine if isinstance(machine, Machine) else load_machine(machine)
    table = m.raw.get("filesystem")
    return filesystem_table_spec(table) if table else None


def network_spec(machine: Machine | str | Path, variant: str | None = None) -> str:
    """The ``"model:k=v,..."`` spec string of a machine's network.

    *machine* is a :class:`Machine` or anything :func:`load_machine` accepts;
    *variant* picks a table of ``[network_variants]`` instead of
    ``[network]`` (unknown variants raise :class:`MachineError` listing the
    valid ones).  Keys keep their file order.
    """
    m = machine if isinstance(machine, Machine) else load_machine(machine)
    variant = variant if variant is not None else m.variant
    if variant is None:
        table = m.network
    else:
        variants = m.network_variants
        if variant not in variants:
            valid = ", ".join(sorted(variants)) or "none"
            raise MachineError(f"{m.label} has no network variant {variant!r}; "
                               f"valid: {valid}")
        table = variants[variant]
    table = _with_cores(m, table, variant)
    mapping = table.get("mapping")
    if (isinstance(mapping, str) and mapping.startswith("file:") and m.path is not None
            and not Path(mapping[5:]).is_absolute()):   # beside the machine file, not cwd
        table = {**table, "mapping": f"file:{m.path.parent / mapping[5:]}"}
    args = ",".join(f"{k}={_format(v)}" for k, v in table.items() if k != "model")
    return f"{table['model']}:{args}" if args else str(table["model"])


def _with_cores(m: Machine, table: dict[str, Any], variant: str | None) -> dict[str, Any]:
    """*table* with the machine's ``cores_per_node`` as ``cores`` where the model takes it.

    A file that says ``cores_per_node`` once (at the top) describes every node.
    A network table may place fewer ranks per node (``cores = 1``: one process
    per node, as the petascale HPL run), never more than the node has cores.  Its
    ``ranks_per_node`` (the layout of a model without ``cores``: the flat variant of a
    topology) is not the model's: it is ``cores`` for a model that takes it, and is
    dropped for one that does not.
    """
    rpn = table.get(RANKS_PER_NODE)
    table = {k: v for k, v in table.items() if k != RANKS_PER_NODE}
    try:
        from netmodels import REGISTRY
    except ImportError:  # pragma: no cover - netmodels ships with bsim
        return table
    cls = REGISTRY.get(str(table["model"]))
    if cls is None or "cores" not in cls.parameters:
        return table
    if "devices" in cls.parameters:   # a topology: the node's devices and NICs unless it says
        table = {**table, **{k: m.node[k] for k in NODE_NETWORK_KEYS
                             if k in m.node and k not in table}}
    if rpn is not None:
        table["cores"] = rpn
    where = f"[network_variants.{variant}]" if variant else "[network]"
    if "cores" in table:
        if not isinstance(table["cores"], int) or table["cores"] > m.cores_per_node:
            raise MachineError(f"{m.label}: {where} cores = {table['cores']!r} "
                               f"ranks per node, but a node has cores_per_node = "
                               f"{m.cores_per_node}")
        return table
    return {**table, "cores": m.cores_per_node}


def _no_model(label: str, table: dict[str, Any]) -> MachineError:
    """The error of a ``[collectives]`` table without a string ``model``: a misspelt key
    (``modl``) named, with the known keys (``model`` and the models' parameters)."""
    import difflib

    from netmodels.collective_costs import COLLECTIVE_MODELS
    params = sorted({k for cls in COLLECTIVE_MODELS.values()
                     for k in getattr(cls, "parameters", {})})
    known = ["model", *params]
    names = ", ".join(repr(n) for n in sorted(COLLECTIVE_MODELS))
    if "model" in table:
        return MachineError(f"{label}: [collectives] model must be a string (one of {names}), "
                            f"found {table['model']!r}")
    unknown = [k for k in table if k not in known and not isinstance(table[k], dict)]
    near = [(k, difflib.get_close_matches(k, known, n=1)) for k in unknown]
    said = "; ".join(f"unknown key {k!r}" + (f" (did you mean {n[0]!r}?)" if n else "")
                     for k, n in near)
    return MachineError(f"{label}: [collectives] has no 'model' key" + (f"; {said}" if said
                        else "") + f"; known keys: {', '.join(known)} (model: one of {names})")


def collective_spec(machine: Machine | str | Path) -> str | dict[str, str] | None:
    """The collective-cost spec of a machine's ``[collectives]``, or None if absent.

    ``model = "clog"`` with top-level ``c``/``d`` gives ``"clog:c=..,d=.."`` for
    every operation.  With per-op tables only (``allreduce = { c = .., d = .. }``,
    the MILC paper's fits) it gives ``{"default": "analytic", "allreduce":
    "clog:allreduce.c=..,allreduce.d=.."}``: the fitted operations use the fit,
    the others the analytic model (the run records both).  Other scalar keys pass
    through as ``key=value``.  Raises :class:`MachineError` for a table without a
    string ``model``.
    """
    m = machine if isinstance(machine, Machine) else load_machine(machine)
    table = m.collectives
    if not table:
        return None
    model = table.get("model")
    if not isinstance(model, str):
        raise _no_model(m.label, table)
    args: list[str] = []
    per_op: dict[str, str] = {}
    for key, value in table.items():
        if key == "model":
            continue
        if isinstance(value, dict):
            per_op[key] = ",".join(f"{key}.{k}={_format(v)}" for k, v in value.items())
        elif key == "path" and m.path is not None and not Path(str(value)).is_absolute():
            args.append(f"path={(m.path.parent / str(value)).resolve()}")   # next to the file
        else:
            args.append(f"{key}={_format(value)}")
    if model == "clog" and per_op and not {"c", "d"} & set(table):
        extra = "," + ",".join(args) if args else ""
        return {"default": "analytic",
                **{op: f"clog:{text}{extra}" for op, text in per_op.items()}}
    args = list(per_op.values()) + args
    return f"{model}:{','.join(args)}" if args else model
