"""HPL's kernel-time models: seconds for dgemm, dtrsm, dgemv and idamax flops.

A :class:`KernelModel` is built from the skeleton's ``kernel`` spec: a machine
preset's ``[kernels.hpl_blas]`` table (the BSIM paper's piecewise dgemm fit,
``bsim/machines/<name>.toml``), a flat rate (``flat:rate=1e9``) or a user
table (``table:path=FILE.csv``).  A model is built once per run and shared by its
ranks (:func:`~netmodels.input_files.per_run`): each run reads the files afresh, so
``Result.inputs`` records them (``kernel table FILE.csv``, ``machine FILE.toml``) and an
edit between two runs of one process is seen.
"""

from __future__ import annotations

import math
from typing import Any

from bsim.machines.kernels import check_fit_unit
from netmodels.input_files import note_input, per_run

from .models.hpl import dgemm_time

__all__ = ["KernelModel", "KERNELS", "FIT_UNITS", "generic_kernel", "REFERENCE_MACHINE"]

REFERENCE_MACHINE = "primequest"
"""The machine whose measured dgemm (the BSIM paper's Fig. 4 fit) calibrates the generic model."""

KERNELS = ("dgemm", "dtrsm", "dgemv", "idamax")
FIT_UNITS = ("flops", "flop")
"""The work a ``bsim fit kernel`` table must be fitted over to be a BLAS call's time."""


# -- kernel-time models ----------------------------------------------------------
class KernelModel:
    """Seconds of a BLAS call from its flop count, one function per kernel.

    ``KernelModel.build(spec)`` accepts:

    * a machine name or ``.toml`` path (``"primequest"``): its ``[kernels.hpl_blas]``
      table, one entry per kernel, either ``{rate = flop/s}`` or the BSIM paper's
      piecewise fit ``{slope_small, slope_large, break_flops}`` (s/flop below
      and above ``break_flops``, continuous at the break);
    * ``"flat:rate=R"`` (flop/s) or ``"flat:seconds_per_flop=G"``: every kernel
      at one rate;
    * ``"table:path=FILE"``: a CSV of ``kernel,flops,seconds`` rows, linearly
      interpolated per kernel through ``(0, 0)`` and extrapolated with the last
      segment's slope.

    Missing kernels fall back to ``dgemm``.  Raises :class:`ValueError` for an
    unknown spec, kernel or malformed entry.
    """

    def __init__(self, funcs: dict[str, Any], spec: str) -> None:
        self.spec = spec
        self.funcs = {k: funcs.get(k, funcs["dgemm"]) for k in KERNELS}
        self.dgemm = self.funcs["dgemm"]
        self.dtrsm = self.funcs["dtrsm"]
        self.dgemv = self.funcs["dgemv"]
        self.idamax = self.funcs["idamax"]

    def __repr__(self) -> str:
        return f"<KernelModel {self.spec}>"

    def vec(self, kernel: str, flops: Any) -> Any:
        """Seconds of each call in the numpy array *flops* (one call per entry)."""
        import numpy as np
        f = self.funcs[kernel]
        vf = getattr(f, "vectorized", None)
        if vf is not None:
            return vf(flops)
        return np.array([f(x) for x in flops], dtype=float)

    @classmethod
    def build(cls, spec: str | KernelModel) -> KernelModel:
        """The model for *spec* (built once per run: every rank of a run shares one)."""
        if isinstance(spec, KernelModel):
            return spec
        model: KernelModel = per_run(("hpl kernels", cls, spec), lambda: cls._build(spec))
        return model

    @classmethod
    def _build(cls, spec: str) -> KernelModel:
        name, _, rest = str(spec).partition(":")
        args = dict(kv.split("=", 1) for kv in rest.split(",") if kv) if rest else {}
        if name == "flat":
            key = "rate" if "rate" in args else "seconds_per_flop"
            if key not in args:
                raise ValueError(f"kernel spec {spec!r}: flat needs rate= or seconds_per_flop=")
            value = float(args[key])
            if not value > 0 or not math.isfinite(value):
                raise ValueError(f"kernel spec {spec!r}: {key} must be positive and finite")
            g = 1.0 / value if key == "rate" else value
            return cls({"dgemm": _linear(g)}, str(spec))
        if name == "table":
            return cls(_table(args.get("path", "")), str(spec))
        from bsim.machines import load_machine
        machine = load_machine(name)
        table = machine.kernels.get("hpl_blas")
        if not table:
            raise ValueError(f"kernel spec {spec!r}: machine {name!r} has no [kernels.hpl_blas]")
        funcs = {}
        for kernel, entry in table.items():
            if kernel not in KERNELS:
                raise ValueError(f"[kernels.hpl_blas] of {name!r}: unknown kernel {kernel!r}; "
                                 f"valid: {', '.join(KERNELS)}")
            funcs[kernel] = _entry(entry, f"{machine.label}: [kernels.hpl_blas] {kernel}")
        if "dgemm" not in funcs:
            raise ValueError(f"[kernels.hpl_blas] of {name!r} has no dgemm entry")
        return cls(funcs, str(spec))


def _linear(g: float) -> Any:
    def f(flops: Any) -> Any:
        return g * flops
    f.vectorized = f  # type: ignore[attr-defined]
    return f


def _fitted(entry: dict[str, Any], where: str) -> Any:
    """A table ``bsim fit kernel`` writes (``model`` = linear, piecewise or cache2, over
    flops; the bookkeeping keys ignored), as the time of one call: the formulas of
    ``bsim.calibration.kernel_time``, on a number or on an array of flop counts."""
    import numpy as np
    check_fit_unit(entry, FIT_UNITS, where, "HPL's and PHASE's BLAS kernels take seconds "
                   "per call of x flops")
    model = entry["model"]
    try:
        if model == "linear":
            t0, slope = float(entry.get("t0", 0.0)), float(entry["slope"])

            def f(flops: Any) -> Any:
                return t0 + slope * flops
        elif model == "piecewise":
            a, b, brk = (float(entry[k]) for k in ("slope_small", "slope_large", "break_flops"))
            above = (lambda x: a * brk + b * (x - brk)) if entry.get("continuous", True) \
                else (lambda x: b * x)

            def f(flops: Any) -> Any:
                return np.where(flops <= brk, a * flops, above(flops)) \
                    if isinstance(flops, np.ndarray) else (a * flops if flops <= brk
                                                           else above(flops))
        elif model == "cache2":
            b1, b2, size = float(entry["b1"]), float(entry["b2"]), float(entry["s"])

            def f(flops: Any) -> Any:
                return b1 * np.minimum(size, flops) + b2 * np.maximum(0.0, flops - size)
        else:
            raise ValueError(f"kernel entry {where}: unknown model {model!r}; expected "
                             f"linear, piecewise or cache2")
    except KeyError as missing:
        raise ValueError(f"kernel entry {where}: a {model} fit needs {missing}") from None
    f.vectorized = f  # type: ignore[attr-defined]
    return f


def _entry(entry: Any, where: str) -> Any:
    if isinstance(entry, dict) and "model" in entry:
        return _fitted(entry, where)
    if isinstance(entry, dict) and set(entry) == {"rate"}:
        return _linear(1.0 / float(entry["rate"]))
    if isinstance(entry, dict) and set(entry) == {"slope_small", "slope_large", "break_flops"}:
        s, lg, b = (float(entry[k]) for k in ("slope_small", "slope_large", "break_flops"))

        def f(flops: float) -> float:
            return dgemm_time(flops, slope_small=s, slope_large=lg, break_flops=b)

        def vf(flops: Any) -> Any:   # the same continuous piecewise fit on an array
            import numpy as np
            return np.where(flops <= b, s * flops, s * b + lg * (flops - b))
        f.vectorized = vf  # type: ignore[attr-defined]
        return f
    raise ValueError(f"kernel entry {where}: expected {{rate}}, {{slope_small, slope_large, "
                     f"break_flops}} or a table of bsim fit kernel, got {entry!r}")


def _table(path: str) -> dict[str, Any]:
    import bisect
    import csv
    import io
    points: dict[str, list[tuple[float, float]]] = {}
    with open(path, "rb") as fh:
        raw = fh.read()
    note_input("kernel table", path, raw)
    with io.StringIO(raw.decode("utf-8"), newline="") as fh:
        for row in csv.reader(fh):
            if not row or row[0].strip().startswith("#") or row[0].strip() == "kernel":
                continue
            kernel, flops, seconds = row[0].strip(), float(row[1]), float(row[2])
            if kernel not in KERNELS:
                raise ValueError(f"kernel table {path}: unknown kernel {kernel!r}")
            points.setdefault(kernel, [(0.0, 0.0)]).append((flops, seconds))
    if "dgemm" not in points:
        raise ValueError(f"kernel table {path}: no dgemm rows")

    def interp(pts: list[tuple[float, float]]) -> Any:
        pts = sorted(pts)
        xs = [x for x, _ in pts]

        def f(flops: float) -> float:
            i = min(max(bisect.bisect_right(xs, flops), 1), len(xs) - 1)
            (x0, y0), (x1, y1) = pts[i - 1], pts[i]
            return y0 + (y1 - y0) * (flops - x0) / (x1 - x0) if x1 > x0 else y1
        return f
    return {k: interp(v) for k, v in points.items()}


def generic_kernel(machine: Any) -> tuple[str, str]:
    """``(kernel spec, account)`` for a machine without ``[kernels.hpl_blas]``.

    Every BLAS kernel runs at the fraction of peak that PRIMEQUEST's dgemm
    reached (the BSIM paper's Fig. 4 fit above its break: 0.165 ns/flop on a
    6.4 GFlop/s Itanium 2 core, 94.7%), times the rank's share of the node's
    peak (``Machine.peak_flops_per_rank``): ``flat:rate=eff*peak``.  Optimistic
    for the memory-bound dgemv and idamax, which the account says.  Raises
    ``MachineError`` when the machine gives no peak.
    """
    from bsim.machines import MachineError, load_machine
    peak = machine.peak_flops_per_rank
    if peak is None:
        raise MachineError(f"machine {machine.spec!r} has no [kernels.hpl_blas] and no "
                           f"[hardware] peak_flops_per_core for the generic model: add "
                           f"either (docs/machines.md)")
    ref = load_machine(REFERENCE_MACHINE)
    entry = ref.kernels["hpl_blas"]["dgemm"]
    rate_ref = float(entry["rate"]) if "rate" in entry else 1.0 / float(entry["slope_large"])
    peak_ref = ref.peak_flops_per_rank
    assert peak_ref is not None, f"{REFERENCE_MACHINE} needs [hardware] peak_flops_per_core"
    eff = rate_ref / peak_ref
    rate = eff * peak
    return (f"flat:rate={rate!r}",
            f"kernel = flat:rate={rate:.4g}: generic, every BLAS kernel at {eff:.1%} of "
            f"{machine.spec}'s {peak / 1e9:.4g} GF/s per rank ({REFERENCE_MACHINE}'s dgemm "
            f"fraction of peak, BSIM paper Fig. 4; optimistic for dgemv and idamax)")
