"""Where a skeleton's compute times come from on the machine a run names.

A skeleton declares how it takes compute times from a machine with a
:class:`MachineKernel` (``Skeleton.machine_kernel`` in ``skeletons/registry.py``);
``bsim run --machine M`` (``bsim.cli.targets.load_target``) asks :func:`choose`
for the value of that parameter and a one-line account of its source, which
the result records as ``kernel_model``.  In order:

1. **Given**: the user set the parameter (``--param t_cell=...``): used as is.
2. **Table**: ``[kernels.<table>]`` of the machine file has the skeleton's
   entry (a measured or fitted time from a paper, or the ``linear`` table of
   ``bsim fit kernel``, whose slope is the time per unit, :func:`per_unit_time`):
   used.
3. **Generic** (:func:`generic_time`), for a per-unit time: a roofline
   ``t = max(t_compute, bytes / memory bandwidth per core)``.  ``t_compute``
   scales the skeleton's reference measurement by the ratio of peaks,
   ``t_ref * peak_ref / peak_M`` (the skeleton keeps the fraction of peak it
   reached on the reference machine), or is ``flops / peak_M`` when the
   skeleton has no reference (a bound: 100% of peak).  The memory term needs
   ``[hardware] memory_bandwidth_per_node`` and the skeleton's bytes per unit;
   a skeleton that declares itself memory-bound refuses a machine without it.
4. Otherwise an error that names what to add to the machine file.

No silent fallback to another machine's table: a machine that lacks a piece
either gets the generic model (said in the result) or an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import MACHINE_DIR, Machine, MachineError, load_machine
from .flags import note_kernel_flags
from .schema import BUNDLED_TABLES, KERNEL_TABLES, kernel_table

__all__ = ["MachineKernel", "choose", "generic_time", "per_unit_time", "FIT_BOOKKEEPING",
           "check_fit_unit"]


@dataclass(frozen=True)
class MachineKernel:
    """How a skeleton takes its compute times from a machine.

    ``param`` is the skeleton parameter that carries them; ``table`` names
    ``[kernels.<table>]`` in the machine file.  With ``key`` the parameter is
    a time per ``unit`` (seconds), read from ``table[key]``; without, it is
    the machine's name and the skeleton reads the whole table itself
    (``generic`` then builds the parameter's value from the machine's peak,
    or is None: the table is required).
    """

    param: str
    table: str
    unit: str = ""
    key: str | None = None
    reference: str | None = None
    """Machine whose ``table[key]`` calibrates the generic model (peak-ratio scaling)."""
    flops: float | None = None
    """Floating-point operations per unit (None: not known)."""
    bytes: float | None = None
    """Bytes of memory traffic per unit (None: not known)."""
    memory_bound: bool = False
    """Refuse the generic model on a machine without memory bandwidth."""
    generic: Any = None
    """For a name parameter: ``generic(machine) -> (value, account)`` or None."""
    source: str = ""
    """Where the flop and byte counts come from (for the account)."""
    follows: tuple[str, ...] = ()
    """Other time parameters calibrated with ``param``'s default (the same assumed machine):
    on a machine each becomes ``default * value / param's default``, *value* the machine's
    or the user's own ``param`` (the same what-if either way), unless the user set it."""
    keys: tuple[str, ...] = ()
    """Without ``key``: the entries of the table the skeleton reads itself."""
    spec_kinds: tuple[str, ...] = ()
    """Without ``key``: the other kinds of value the parameter takes besides a machine
    (HPL's ``flat:rate=R``, ``table:path=F``), which ``bsim run`` leaves to the skeleton."""
    fit_units: tuple[str, ...] = ()
    """The work columns of ``bsim fit kernel`` (``cells``, ``flops``, ``sites``...) whose
    fits the parameter takes, the first one named in errors (:func:`check_fit_unit`);
    empty: a fit over any unit is taken."""

    def __post_init__(self) -> None:
        """Check the keys read against the schema's ``KERNEL_TABLES`` (a bundled table: a
        key it does not declare is a ``ValueError`` on import, so the two cannot drift), or
        declare a skeleton's own table there (:func:`~bsim.machines.schema.kernel_table`)."""
        reads = (self.key,) if self.key else self.keys
        if self.table not in BUNDLED_TABLES:
            kernel_table(self.table, reads)
            return
        declared = KERNEL_TABLES[self.table].reads
        missing = [k for k in reads if k not in declared]
        if missing:
            raise ValueError(f"MachineKernel {self.param}: [kernels.{self.table}] declares "
                             f"no {', '.join(missing)} in bsim/machines/schema.py "
                             f"KERNEL_TABLES (it reads {', '.join(declared)})")


def _table_entry(machine: Machine, kernel: MachineKernel) -> Any:
    table = machine.kernels.get(kernel.table)
    if not table:
        return None
    if kernel.key is None:   # the skeleton reads the table itself: name the machine file
        return kernel_source(machine)
    return table.get(kernel.key)


FIT_BOOKKEEPING = ("model", "unit", "rel_residual", "variation", "rate")
"""Keys of a ``bsim fit kernel`` table besides the parameters (and their ``*_var``)."""


def check_fit_unit(entry: Any, units: tuple[str, ...], where: str, takes: str) -> None:
    """Refuse a ``bsim fit kernel`` table fitted over a work unit other than *units*: its
    ``unit`` (the data's work column) must be one of them, as the reader feeds the fit
    that work (*takes*: ``"halo2d's t_point takes seconds per grid-point update"``).  An
    entry without ``unit`` (a preset's, or written by hand) is taken as over *units*.
    Raises :class:`MachineError`, one line naming *where* (the file, the table and the
    key), the fitted unit and the expected one."""
    unit = entry.get("unit") if isinstance(entry, dict) else None
    if units and unit is not None and unit not in units:
        raise MachineError(f"{where}: a fit over {unit!r}, but {takes}: fit the data with "
                           f"its work in {units[0]} (a {units[0]!r} column; "
                           f"docs/calibration.md)")


def per_unit_time(entry: Any, kernel: MachineKernel, where: str,
                  source: str) -> tuple[float, str]:
    """``(seconds per unit, account)`` from a ``[kernels.T] KEY`` entry for a per-unit
    parameter: a number (a preset's measured time), or the ``linear`` table that
    ``bsim fit kernel`` writes (``T(x) = t0 + slope x``, tagged ``model = "linear"`` or,
    as ``bsim.calibration.kernel_time`` reads it, untagged: ``slope`` per unit; the per-call
    ``t0`` has no place in a per-unit parameter and is named in the account; the
    bookkeeping keys ``model``, ``unit``, ``*_var``, ``rel_residual``, ``variation``,
    ``rate`` are ignored).  A two-slope fit (``piecewise``, ``cache2``) has no single time
    per unit and is refused, as is any other shape: :class:`MachineError`, one line."""
    name = where
    if isinstance(entry, (int, float)) and not isinstance(entry, bool):
        return float(entry), f"{kernel.param} = {float(entry):.4g} s per {kernel.unit}: " \
                             f"{source}"
    fix = (f"give seconds per {kernel.unit} as a number, or fit the data with 'bsim fit "
           f"kernel DATA.csv --model linear'")
    if not isinstance(entry, dict):
        raise MachineError(f"{name} = {entry!r}: expected seconds per {kernel.unit}: {fix}")
    model = entry.get("model") or ("linear" if "slope" in entry else "cache2" if "b1" in entry
                                   else "piecewise" if "slope_small" in entry else None)
    check_fit_unit(entry, kernel.fit_units, name,
                   f"{kernel.param} is seconds per {kernel.unit}")
    if model in ("piecewise", "cache2"):
        raise MachineError(f"{name} is a {model} fit, whose time per unit depends on the work "
                           f"per call; {kernel.param} is one time per {kernel.unit}: {fix}, "
                           f"or give --param {kernel.param}=SECONDS")
    params = {k for k in entry if k not in FIT_BOOKKEEPING and not k.endswith("_var")}
    slope = entry.get("slope")
    if model != "linear" or params - {"t0", "slope"} or isinstance(slope, bool) \
            or not isinstance(slope, (int, float)) or not slope >= 0:
        raise MachineError(f"{name} = {entry!r}: not a table of bsim fit kernel's linear "
                           f"model (model = \"linear\", slope >= 0 seconds per unit): {fix}")
    t0 = entry.get("t0", 0.0)
    t0 = float(t0) if isinstance(t0, (int, float)) and not isinstance(t0, bool) else 0.0
    unit = entry.get("unit", "unit")
    account = (f"{kernel.param} = {float(slope):.4g} s per {kernel.unit}: {source} (bsim fit "
               f"kernel, linear slope per {unit})")
    if t0 > 0:
        account += (f"; its t0 = {t0:.3g} s per call is not carried ({kernel.param} is per "
                    f"{kernel.unit})")
    return float(slope), account


def kernel_source(machine: Machine) -> str:
    """What names *machine*'s kernel tables for a skeleton that reads them itself (HPL's
    and PHASE's ``kernel`` parameter): a preset's name or a machine file's path, without
    a network variant, which changes only the network (``power5:p1024``'s kernels are
    ``power5``'s)."""
    path = machine.path
    if path is None:   # built in code, not read from a file
        return machine.name
    return path.stem if path.resolve().parent == MACHINE_DIR.resolve() else str(path)


def generic_time(kernel: MachineKernel, machine: Machine) -> tuple[float, str]:
    """``(seconds per unit, account)`` of the roofline of the module docstring.

    Raises :class:`MachineError` naming the ``[hardware]`` figure to add.
    """
    peak = machine.peak_flops_per_core
    name = machine.spec
    label = machine.label
    if peak is None:
        raise MachineError(f"{label} has no [kernels.{kernel.table}] "
                           f"{kernel.key} and no [hardware] peak_flops_per_core for the "
                           f"generic model: add either (docs/machines.md)")
    bandwidth = machine.memory_bandwidth_per_core
    if kernel.memory_bound and (bandwidth is None or kernel.bytes is None):
        raise MachineError(f"{label} has no [kernels.{kernel.table}] {kernel.key} "
                           f"and no [hardware] memory_bandwidth_per_node; the {kernel.unit} "
                           f"is memory-bound: add either (docs/machines.md)")
    if kernel.reference is not None:
        ref = load_machine(kernel.reference)
        t_ref = float(ref.kernels[kernel.table][kernel.key])
        peak_ref = ref.peak_flops_per_core
        assert peak_ref is not None, f"reference machine {ref.name} needs a peak"
        t_compute = t_ref * peak_ref / peak
        account = (f"{t_ref:.4g} s on {ref.name} ({peak_ref / 1e9:.4g} GF/s) scaled to "
                   f"{peak / 1e9:.4g} GF/s")
    elif kernel.flops is not None:
        t_compute = kernel.flops / peak
        account = f"{kernel.flops:g} flop at peak {peak / 1e9:.4g} GF/s (a bound)"
    else:   # pragma: no cover - a declaration error, caught by the registry's tests
        raise MachineError(f"{kernel.param}: the generic model needs a reference or flops")
    t = t_compute
    if bandwidth is not None and kernel.bytes is not None:
        t_memory = kernel.bytes / bandwidth
        account += f"; memory {kernel.bytes:g} B at {bandwidth / 1e9:.4g} GB/s per core"
        if t_memory > t_compute:
            t = t_memory
            account += " (memory-bound)"
    elif kernel.bytes is None:
        account += "; no memory term (the skeleton gives no bytes per unit)"
    else:
        account += "; no memory term (no [hardware] memory_bandwidth_per_node)"
    if machine.node:   # the figures are a device's, shared by the ranks on it
        d = machine.devices_per_node
        account += (f"; per device ({machine.node.get('device', 'device')}), "
                    f"{machine.cores_per_node / d:g} rank slot(s) a device")
    return t, f"{kernel.param} = {t:.4g} s per {kernel.unit}: generic roofline on {name}, " \
              f"{account}"


def choose(kernel: MachineKernel, machine: str, given: dict[str, Any]) -> tuple[Any, str]:
    """``(parameter value, account)`` for *kernel* on *machine*; ``(None, account)`` when
    the user gave the parameter in *given* (keep it)."""
    if kernel.param in given:
        return None, f"{kernel.param} = {given[kernel.param]} (given)"
    m = load_machine(machine)
    entry = _table_entry(m, kernel)
    if entry is not None:
        where = f"{m.name} [kernels.{kernel.table}]"
        if kernel.key is None:
            note_kernel_flags(m, kernel.table, kernel.keys)   # the entries it reads
            return entry, f"{kernel.param} = {entry}: {where}"
        chosen = per_unit_time(entry, kernel, f"{m.label}: [kernels.{kernel.table}] "
                                              f"{kernel.key}", f"{where} {kernel.key}")
        note_kernel_flags(m, kernel.table, (kernel.key,))
        return chosen
    if kernel.key is not None:
        return generic_time(kernel, m)
    if kernel.generic is not None:
        return kernel.generic(m)
    raise MachineError(f"{m.label} has no [kernels.{kernel.table}] table (the "
                       f"compute-time fits that --param {kernel.param} reads): add it "
                       f"(docs/machines.md) or name a machine that has one with "
                       f"--param {kernel.param}=NAME")
