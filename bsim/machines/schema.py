"""The schema of a machine file, checked when it is loaded (``docs/machines.md``, "Schema").

Hand checks rather than a validation library: the schema is small, and each
error must name the file, the key, what was expected and what was found, in
one line.  Unknown keys are errors (a misspelt key would otherwise be
ignored), with the closest valid name suggested.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["check_machine_file", "check_network", "MachineError", "NETWORK_MODELS",
           "KernelTable", "KERNEL_TABLES", "BUNDLED_TABLES", "kernel_table", "RANKS_PER_NODE",
           "NODE_KEYS", "NODE_NETWORK_KEYS"]


class MachineError(ValueError):
    """A machine preset is unknown or malformed."""


NETWORK_MODELS = ("hockney", "loggp", "zero", "torus", "fattree", "bluewaters", "piecewise")
"""Model names a ``[network]`` table may use (plus every later-registered model)."""
RANKS_PER_NODE = "ranks_per_node"
"""A network table's layout key, not passed to the model: ranks per node for a model
without ``cores`` (``petascale_torus:flat``'s one rank per node), at most ``cores_per_node``."""

MAX_CORES_PER_NODE = 1 << 20
"""The most ``cores_per_node`` a machine file may say: far above any node built (a few
hundred cores), far below what overflows a count of cores in a run."""
REQUIRED = {"name": str, "description": str, "source": str, "cores_per_node": int,
            "network": dict}
OPTIONAL_TABLES = ("collectives", "kernels", "network_variants", "hardware", "filesystem",
                   "node")
PEAK = "peak_flops_per_core"
MEMORY_BANDWIDTH = "memory_bandwidth_per_node"
HARDWARE_NUMBERS = (PEAK, MEMORY_BANDWIDTH)
"""The ``[hardware]`` keys bsim reads (``Machine.peak_flops_per_core``,
``memory_bandwidth_per_core``); the table's other keys are free-form facts."""
NODE_KEYS: dict[str, type | tuple[type, ...]] = {
    "devices": int, "kind": str, "device": str, "nics": int, "nic": str, "nic_policy": str,
    "peak_flops_per_device": (int, float), "memory_bandwidth_per_device": (int, float),
    "nic_bandwidth": (int, float), "device_latency": (int, float),
    "device_bandwidth": (int, float)}
"""``[node]``: the devices (GPUs or CPU sockets) and NICs of a node (``docs/machines.md``,
"Nodes with devices and NICs"); the numbers are positive."""
NODE_NETWORK_KEYS = ("nics", "devices", "nic_policy", "device_latency", "device_bandwidth")
"""The ``[node]`` keys a topology network takes (``netmodels/nodes.py``)."""
NEAR = 0.85
"""A free-form ``[hardware]`` key or an application's ``[kernels]`` table name this close
(``difflib`` ratio, case ignored) to a name bsim reads is a misspelling of it: the closest
other names are 0.78 apart (``memory_bytes_per_node``)."""


@dataclass(frozen=True)
class KernelTable:
    """What ``[kernels.<name>]`` of a machine file may hold.

    ``reads`` are the entries its reader takes (a skeleton's ``MachineKernel`` checks its
    ``key`` or ``keys`` against them when it is made); ``records`` are a paper's figures
    kept beside them that no run reads (tests and benchmarks check them against the
    papers).  Any other key is refused on load: a misspelt entry is never ignored.
    """

    name: str
    reads: tuple[str, ...] = ()
    records: tuple[str, ...] = ()

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key the table may hold: ``reads``, then ``records``."""
        return self.reads + tuple(k for k in self.records if k not in self.reads)


KERNEL_TABLES: dict[str, KernelTable] = {}
"""Table name -> :class:`KernelTable`: the one list the load check and the readers use."""


def kernel_table(name: str, reads: tuple[str, ...] = (),
                 records: tuple[str, ...] = ()) -> KernelTable:
    """Declare (or extend) ``[kernels.<name>]``: a skeleton of the user's declares its own
    table this way through its ``MachineKernel``.  Returns the table as now declared."""
    old = KERNEL_TABLES.get(name, KernelTable(name))
    table = KernelTable(name, tuple(dict.fromkeys(old.reads + tuple(reads))),
                        tuple(dict.fromkeys(old.records + tuple(records))))
    KERNEL_TABLES[name] = table
    return table


# The tables bsim's readers use: skeletons/sweep3d.py, halo2d.py, sage.py, dns3d.py (one
# time per unit, through bsim/machines/kernels.py choose()), skeletons/hpl_kernels.py
# (KERNELS; HPL and PHASE) and skeletons/milc.py (milc_kernels), and the papers' figures
# the presets record.
kernel_table("sweep3d", reads=("tcell",), records=("ts", "tb", "tb_fit_bytes"))
kernel_table("halo2d", reads=("t_point",))
kernel_table("dns3d", reads=("t_flop",))
kernel_table("sage", reads=("t_cell",),   # the installation paper's counts and Table 3
             records=("float_gather_scatters", "int_gather_scatters", "two_rail_speedup",
                      "pci66_gain", "table3_tokens_33mhz", "table3_tokens_66mhz", "tmem_p2",
                      "tmem_pgt2"))
kernel_table("hpl_blas", reads=("dgemm", "dtrsm", "dgemv", "idamax"))
kernel_table("milc", reads=("LL", "FL", "GF", "FF", "CG", "float_bytes"))
# the BSIM paper: the petascale HPL run; the flop rates (PRIMEQUEST's dgemm fit, Fig. 4;
# the design's peaks and Table V's SIMD factors, read by benchmarks/phase_petascale.py);
# PHASE's zgemm fit (Fig. 3, skeletons/models/phase.py ZGEMM_*) and SCF flops
kernel_table("hpl", records=("N", "NB", "P", "Q", "flops", "predicted_pflops"))
kernel_table("flops", records=("dgemm", "peak_per_core", "peak_per_node", "peak_system",
                               "simd_speedup_fft1024", "simd_speedup_dgemm1024",
                               "simd_dgemm_efficiency", "scalar_dgemm_efficiency"))
kernel_table("phase", records=("zgemm", "flops_per_scf_iteration"))
BUNDLED_TABLES = frozenset(KERNEL_TABLES)
"""The tables above; a ``MachineKernel`` may read only keys they declare as read."""


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
    valid = list(REQUIRED) + ["year"] + list(OPTIONAL_TABLES)
    for key in data:
        if key not in valid:
            raise _unknown(where, key, valid)
    if "year" in data and (isinstance(data["year"], bool) or not isinstance(data["year"], int)):
        raise MachineError(f"{where}: 'year' must be an integer (the year the machine "
                           f"entered service), found {_kind(data['year'])} {data['year']!r}")
    for key, kind in REQUIRED.items():
        if key not in data:
            raise MachineError(f"{where}: missing key {key!r} ({_kind(kind())} expected)")
        value = data[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise MachineError(f"{where}: {key!r} must be {_kind(kind())}, found "
                               f"{_kind(value)} {value!r}")
    if not 1 <= data["cores_per_node"] <= MAX_CORES_PER_NODE:
        raise MachineError(f"{where}: cores_per_node must be an integer from 1 to "
                           f"{MAX_CORES_PER_NODE:,} (cores of one node), found "
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
        if "cores" in table and RANKS_PER_NODE in table:
            raise MachineError(f"{where}: {label} has both cores and {RANKS_PER_NODE}, "
                               f"which say the same (ranks per node): keep one")
        for key in ("cores", RANKS_PER_NODE):
            cores = table.get(key)
            if cores is not None and (not isinstance(cores, int) or isinstance(cores, bool)
                                      or not 1 <= cores <= data["cores_per_node"]):
                raise MachineError(f"{where}: {label} {key} = {cores!r} ranks per node, but "
                                   f"a node has cores_per_node = {data['cores_per_node']}")
    _check_kernels(data.get("kernels", {}), where)
    if "node" in data:
        _check_node(data["node"], data["cores_per_node"], where)
    if "filesystem" in data:
        _check_filesystem(data["filesystem"], f"{where}: [filesystem]")
    for key in data.get("hardware", {}):
        near = _near(key, HARDWARE_NUMBERS)
        if near and key not in HARDWARE_NUMBERS:
            raise MachineError(f"{where}: [hardware]: unknown key {key!r} (did you mean "
                               f"{' or '.join(map(repr, near))}?); bsim reads "
                               f"{', '.join(HARDWARE_NUMBERS)}, other keys are free-form facts")
    for key in HARDWARE_NUMBERS:
        value = data.get("hardware", {}).get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value <= 0):
            raise MachineError(f"{where}: [hardware] {key} must be a positive number, found "
                               f"{_kind(value)} {value!r}")


def _check_node(node: dict[str, Any], cores: int, where: str) -> None:
    """``[node]``: known keys of the right types, positive numbers, ``kind`` gpu or cpu,
    ``nic_policy`` device or roundrobin, and ``devices`` at most ``cores_per_node`` (a
    rank runs on one device)."""
    for key, value in node.items():
        kind = NODE_KEYS.get(key)
        if kind is None:
            raise _unknown(f"{where}: [node]", key, list(NODE_KEYS))
        if isinstance(value, bool) or not isinstance(value, kind):
            want = "a string" if kind is str else "an integer" if kind is int else "a number"
            raise MachineError(f"{where}: [node] {key} must be {want}, found {_kind(value)} "
                               f"{value!r}")
        if not isinstance(value, str) and not (math.isfinite(value) and value > 0):
            raise MachineError(f"{where}: [node] {key} must be positive, found {value!r}")
    choices = {"kind": ("gpu", "cpu"), "nic_policy": ("device", "roundrobin")}
    for key, valid in choices.items():
        if key in node and node[key] not in valid:
            raise MachineError(f"{where}: [node] {key} must be {' or '.join(valid)}, found "
                               f"{node[key]!r}")
    if node.get("devices", 1) > cores:
        raise MachineError(f"{where}: [node] devices = {node['devices']}, more than "
                           f"cores_per_node = {cores} (each rank runs on one device)")


def _near(name: str, valid: Any, cutoff: float = NEAR) -> list[str]:
    """The names of *valid* closest to *name* (case ignored), closest first: with the
    default *cutoff*, those *name* is a misspelling of."""
    lower = {v.lower(): v for v in valid}
    return [lower[m] for m in difflib.get_close_matches(name.lower(), list(lower), n=3,
                                                         cutoff=cutoff)]


def _check_kernels(kernels: dict[str, Any], where: str) -> None:
    """``[kernels.NAME]``: a table some reader declares (``bsim/machines/kernels.py``,
    ``KERNEL_TABLES``) holding only the keys it reads or records, or an application's own
    table of ``bsim fit kernel`` entries (inline tables) whose name is no misspelling of a
    declared one."""
    declared = KERNEL_TABLES
    for name, table in kernels.items():
        label = f"[kernels.{name}]"
        if not isinstance(table, dict):
            raise MachineError(f"{where}: {label} must be a table, found "
                               f"{_kind(table)} {table!r}")
        spec = declared.get(name)
        if spec is not None:
            for key in table:
                if key not in spec.keys:
                    near = _near(key, spec.keys, 0.6)
                    hint = f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""
                    raise MachineError(f"{where}: {label}: unknown key {key!r}{hint}; valid: "
                                       f"{', '.join(spec.keys)}")
            continue
        near = _near(name, declared)
        tables = ", ".join(sorted(declared))
        if near:
            raise MachineError(f"{where}: unknown table {label} (did you mean "
                               f"{' or '.join(f'[kernels.{n}]' for n in near)}?); "
                               f"bsim reads {tables}")
        for key, entry in table.items():
            if not isinstance(entry, dict):
                raise MachineError(
                    f"{where}: {label}: {key} = {entry!r} is not a 'bsim fit kernel' entry "
                    f"({{model = ..., ...}}), and no skeleton reads {label} (bsim reads "
                    f"{tables})")


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
