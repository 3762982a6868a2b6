"""hpl: the High-Performance Linpack benchmark (netlib HPL 2.x) as a skeleton.

HPL solves a dense system of order ``n`` by right-looking LU with partial
pivoting of the ``n x (n+1)`` matrix ``[A | b]``, dealt in ``nb x nb`` blocks
block-cyclically over a ``p x q`` process grid (``pmap``: row- or
column-major rank order), followed by a backward substitution.  Per panel of
``jb <= nb`` columns (global column ``j``):

1. **Panel factorization** (``HPL_pdfact``) on the process column owning the
   panel: recursive (``ndiv`` sub-panels down to ``nbmin`` columns) with a
   ``pfact`` leaf (left / Crout / right: one time model, the flops are the
   same).  For *every* matrix column the pivot search is HPL_pdmxswp's
   bi-directional (binary) exchange of ``2 jb + 4`` doubles among the ``p``
   processes of the column (``pivot="column"``).  ``pivot="panel"`` merges a
   panel's ``jb`` exchanges into one exchange of ``jb (2 jb + 4)`` doubles
   (same bytes, ``(jb - 1) log2 p`` fewer latencies): a speed option for
   huge runs, see ``docs/skeletons_hpl_phase.md``.
2. **Panel broadcast** along each process row (``bcast``): ``1ring``,
   ``1ringM``, ``2ring``, ``2ringM``, ``blong`` (spread then roll),
   ``blongM``, as point-to-point messages of HPL's topologies.
3. **Row swaps** along each process column (``swap``): ``bexchange``
   (binary exchange, HPL_pdlaswp00), ``long`` (spread then roll,
   HPL_pdlaswp01) or ``mix`` (binary exchange up to ``swap_threshold`` local
   columns, long above).
4. **Trailing update**: ``dtrsm`` (``jb x jb`` unit lower, computed
   redundantly by every process row, as HPL does) and ``dgemm``.
   ``depth=1`` (look-ahead): the owner of the next panel updates those
   columns first, factors and starts broadcasting the next panel, then
   updates the rest; everybody else updates in chunks of ``nb`` columns and
   probes (``Test``) for the next panel between chunks, forwarding it as
   soon as it is seen (HPL_pdupdate with ``PBCST``).

Kernel times come from a :class:`KernelModel` (``kernel`` spec): the BSIM paper's
piecewise dgemm fit of a machine preset (``[kernels.hpl_blas]`` of
``bsim/machines/<name>.toml``), a flat rate (``flat:rate=1e9``) or a
user table (``table:path=FILE.csv``).  No matrix is allocated: a rank keeps a
few integers per panel.  Every rank returns a dict of its flop counters;
rank 0's also holds ``time`` (max over ranks, seconds) and ``gflops``
(``(2/3 n^3 + 3/2 n^2) / time / 1e9``, as HPL reports) and prints HPL's
result line.
"""

from __future__ import annotations

import math
import time as _time
from typing import Any

import bsim

from .models.hpl import dgemm_time, hpl_flops
from .registry import Param, Skeleton, register

__all__ = ["main", "SKELETON", "KernelModel", "numroc", "BCASTS", "SWAPS", "PFACTS",
           "panel_flops", "global_flops"]

BCASTS = ("1ring", "1ringM", "2ring", "2ringM", "blong", "blongM", "ibcast")
SWAPS = ("bexchange", "long", "mix", "allgatherv")
PFACTS = ("left", "crout", "right")
KERNELS = ("dgemm", "dtrsm", "dgemv", "idamax")
TAG_PIV, TAG_BC, TAG_SW, TAG_BS = 11, 12, 13, 14
_SCHEDULES: dict[Any, dict[Any, Any]] = {}   # panel compute schedules, shared by ranks
_KERNEL_CACHE: dict[str, Any] = {}            # KernelModel by spec
_BUF: list[Any] = [bsim.buffer]               # bsim.Buffer inside a simulation (no per-call check)


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
        """The model for *spec* (cached: every rank of a run shares one)."""
        if isinstance(spec, KernelModel):
            return spec
        model = _KERNEL_CACHE.get(spec)
        if model is None:
            model = _KERNEL_CACHE[spec] = cls._build(spec)
        return model

    @classmethod
    def _build(cls, spec: str) -> KernelModel:
        name, _, rest = str(spec).partition(":")
        args = dict(kv.split("=", 1) for kv in rest.split(",") if kv) if rest else {}
        if name == "flat":
            if "rate" in args:
                g = 1.0 / float(args["rate"])
            elif "seconds_per_flop" in args:
                g = float(args["seconds_per_flop"])
            else:
                raise ValueError(f"kernel spec {spec!r}: flat needs rate= or seconds_per_flop=")
            if not g > 0 or not math.isfinite(g):
                raise ValueError(f"kernel spec {spec!r}: rate must be positive and finite")
            return cls({"dgemm": _linear(g)}, str(spec))
        if name == "table":
            return cls(_table(args.get("path", "")), str(spec))
        from bsim.machines import load_machine
        table = load_machine(name).kernels.get("hpl_blas")
        if not table:
            raise ValueError(f"kernel spec {spec!r}: machine {name!r} has no [kernels.hpl_blas]")
        funcs = {}
        for kernel, entry in table.items():
            if kernel not in KERNELS:
                raise ValueError(f"[kernels.hpl_blas] of {name!r}: unknown kernel {kernel!r}; "
                                 f"valid: {', '.join(KERNELS)}")
            funcs[kernel] = _entry(entry, f"{name}.{kernel}")
        if "dgemm" not in funcs:
            raise ValueError(f"[kernels.hpl_blas] of {name!r} has no dgemm entry")
        return cls(funcs, str(spec))


def _linear(g: float) -> Any:
    def f(flops: Any) -> Any:
        return g * flops
    f.vectorized = f  # type: ignore[attr-defined]
    return f


def _entry(entry: Any, where: str) -> Any:
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
    raise ValueError(f"kernel entry {where}: expected {{rate}} or {{slope_small, slope_large, "
                     f"break_flops}}, got {entry!r}")


def _table(path: str) -> dict[str, Any]:
    import bisect
    import csv
    points: dict[str, list[tuple[float, float]]] = {}
    with open(path, newline="") as fh:
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


# -- block-cyclic bookkeeping ------------------------------------------------------
def numroc(n: int, nb: int, iproc: int, nprocs: int) -> int:
    """Rows (or columns) of a length-*n* block-cyclic dimension owned by *iproc* (source 0)."""
    nblocks, rem = divmod(n, nb)
    num = (nblocks // nprocs) * nb
    extra = nblocks % nprocs
    if iproc < extra:
        num += nb
    elif iproc == extra:
        num += rem
    return num


def panel_flops(m: int, jb: int) -> float:
    """Flops of the LU of an ``m x jb`` panel (``m >= jb``): pivot search, scaling, updates.

    Per column ``i``: ``idamax`` over ``m - i`` entries, ``dscal`` of ``m - i - 1``,
    rank-1 update of ``(m - i - 1) x (jb - i - 1)`` (2 flops each), summed.
    """
    return float(sum((m - i) + (m - i - 1) * (1 + 2 * (jb - i - 1)) for i in range(jb)))


def global_flops(n: int, nb: int) -> dict[str, float]:
    """Useful flops of HPL's algorithm on order *n*: panel LUs, dtrsm, dgemm, back solve."""
    out = {"pfact": 0.0, "dtrsm": 0.0, "dgemm": 0.0, "backsolve": float(n * n)}
    for j in range(0, n, nb):
        jb = min(nb, n - j)
        rest = n + 1 - j - jb           # trailing columns incl. b
        out["pfact"] += panel_flops(n - j, jb)
        out["dtrsm"] += float(jb * (jb - 1) * rest)
        out["dgemm"] += 2.0 * (n - j - jb) * rest * jb
    return out


# -- the exchange and broadcast patterns -----------------------------------------
def _bexchange_plan(me: int, size: int, root: int) -> list[tuple[int, int]]:
    """HPL's bi-directional exchange (leave-on-all) for *me* on *size* processes.

    Relative ranks ``d = me - root mod size``; ``ip2`` = largest power of two
    ``<= size``.  Ranks ``d >= ip2`` first send to ``d - ip2``, the ``ip2``
    others run ``log2 ip2`` butterfly rounds (partner ``d xor 2^k``), then
    ``d < size - ip2`` send the result back to ``d + ip2``.  Returns
    ``(dest, source)`` per step, ``-1`` for none.
    """
    d = (me - root) % size
    ip2 = 1 << (size.bit_length() - 1)
    extra = size - ip2
    ab = lambda r: (r + root) % size  # noqa: E731
    if d >= ip2:
        return [(ab(d - ip2), -1), (-1, ab(d - ip2))]
    plan = [(-1, ab(d + ip2))] if d < extra else []
    k = 1
    while k < ip2:
        plan.append((ab(d ^ k), ab(d ^ k)))
        k <<= 1
    if d < extra:
        plan.append((ab(d + ip2), -1))
    return plan


def _scatter_tree(d: int, size: int) -> tuple[int, list[int]]:
    """Binomial tree over relative ranks: (parent or -1, children largest subtree first)."""
    if d == 0:
        low = 1 << (size - 1).bit_length() if size > 1 else 1
        parent = -1
    else:
        low = d & -d
        parent = d - low
    children = []
    k = low >> 1
    while k >= 1:
        if d + k < size:
            children.append(d + k)
        k >>= 1
    return parent, children


def _pieces(total: int, parts: int) -> list[int]:
    """*total* elements split into *parts* nearly equal pieces (larger first)."""
    q, r = divmod(total, parts)
    return [q + (1 if i < r else 0) for i in range(parts)]


def _spread_roll_steps(d: int, size: int, total: int, offset: int = 0
                       ) -> list[tuple[list[tuple[int, int]], tuple[int, int] | None]]:
    """Spread (binomial scatter of *size* pieces) then roll (ring allgather), relative ranks.

    Ranks are ``offset + 0 .. offset + size - 1`` (0 is the source).  Each step
    is ``(sends [(dest, count)], recv (source, count) or None)``.
    """
    piece = _pieces(total, size)
    parent, children = _scatter_tree(d, size)

    def subtree(r: int) -> int:
        low = (r & -r) if r else (1 << (size - 1).bit_length())
        return sum(piece[r:min(r + low, size)])

    steps: list[tuple[list[tuple[int, int]], tuple[int, int] | None]] = []
    if parent >= 0:
        steps.append(([], (offset + parent, subtree(d))))
    if children:
        steps.append(([(offset + c, subtree(c)) for c in children], None))
    nxt, prv = offset + (d + 1) % size, offset + (d - 1) % size
    for s in range(size - 1):   # send piece d - s, receive piece d - 1 - s
        steps.append(([(nxt, piece[(d - s) % size])], (prv, piece[(d - 1 - s) % size])))
    return steps


def bcast_steps(variant: str, d: int, size: int, count: int
                ) -> list[tuple[list[tuple[int, int]], tuple[int, int] | None]]:
    """Steps of panel broadcast *variant* for relative rank *d* (root 0) of *size*.

    ``1ring``: 0 -> 1 -> ... -> size-1.  ``1ringM``: 0 -> 1 and 0 -> 2 -> 3 ...
    ``2ring``: 0 -> 1 -> ... -> h and 0 -> h+1 -> ... -> size-1 (h = size // 2).
    ``2ringM``: 0 -> 1, then two rings over 2..size-1.  ``blong``: spread then
    roll of *count* over all ranks.  ``blongM``: 0 -> 1 whole, then spread and
    roll over 0, 2, 3, ...  Counts are doubles.
    """
    if size == 1:
        return []
    if variant in ("1ring", "1ringM", "2ring", "2ringM"):
        first = 2 if variant.endswith("M") and size > 2 else 1   # 1: the next panel's owner
        if variant.startswith("1"):
            heads = [first]
        else:
            h = first + (size - first + 1) // 2
            heads = [first, h] if h < size else [first]
        bounds = heads + [size]
        steps: list[Any] = []
        if d == 0:
            dests = ([1] if first == 2 else []) + heads
            return [([(x, count) for x in dests], None)]
        if d == 1 and first == 2:
            return [([], (0, count))]
        for a, b in zip(bounds, bounds[1:], strict=False):
            if a <= d < b:
                steps.append(([], (0 if d == a else d - 1, count)))
                if d + 1 < b:
                    steps.append(([(d + 1, count)], None))
        return steps
    if variant == "blong":
        return _spread_roll_steps(d, size, count)
    if variant == "blongM":
        if size <= 2:
            return bcast_steps("1ring", d, size, count)
        if d == 1:
            return [([], (0, count))]
        rel = 0 if d == 0 else d - 1          # 0, 2, 3, ... -> 0, 1, 2, ...
        steps = _spread_roll_steps(rel, size - 1, count)
        mapped = [([(0 if x == 0 else x + 1, c) for x, c in sends],
                   None if r is None else (0 if r[0] == 0 else r[0] + 1, r[1]))
                  for sends, r in steps]
        if d == 0:
            mapped.insert(0, ([(1, count)], None))
        return mapped
    raise ValueError(f"hpl: unknown bcast {variant!r}; valid: {', '.join(BCASTS[:-1])}")


class _Ibcast:
    """``bcast="ibcast"``: the panel as one ``MPI_Ibcast`` on the process row.

    Posted when the panel's broadcast starts on this rank, completed (``Wait``)
    when the panel is needed; it progresses without probing, so an update is
    never cut into chunks for it.
    """

    __slots__ = ("req",)
    pollable = False
    steps = ()
    pos = 0

    def __init__(self, comm: Any, buf: Any, root: int) -> None:
        self.req = comm.Ibcast(buf, root=root) if comm.Get_size() > 1 else None

    def progress(self, blocking: bool, tag: int = TAG_BC) -> bool:
        if blocking and self.req is not None:
            self.req.Wait()
            self.req = None
        return self.req is None


class _Transfer:
    """A multi-step point-to-point pattern that can be progressed by probing (HPL_bcast)."""

    __slots__ = ("comm", "steps", "pos", "rreq", "sreqs", "dtype")
    pollable = True

    def __init__(self, comm: Any, steps: list[Any], root: int, size: int, dtype: Any) -> None:
        self.comm = comm
        self.steps = [([((root + x) % size, c) for x, c in s],
                       None if r is None else ((root + r[0]) % size, r[1])) for s, r in steps]
        self.pos = 0
        self.rreq: Any = None
        self.sreqs: list[Any] = []
        self.dtype = dtype

    def progress(self, blocking: bool, tag: int = TAG_BC) -> bool:
        """Advance as far as possible (``Test`` when not *blocking*); True when done."""
        comm, steps = self.comm, self.steps
        while self.pos < len(steps):
            sends, recv = steps[self.pos]
            if self.rreq is None:
                for dest, count in sends:
                    self.sreqs.append(comm.Isend(_BUF[0](count, self.dtype), dest=dest, tag=tag))
                if recv is None:
                    self.pos += 1
                    continue
                self.rreq = comm.Irecv(_BUF[0](recv[1], self.dtype), source=recv[0], tag=tag)
            if blocking:
                self.rreq.Wait()
            elif not self.rreq.Test():
                return False
            self.rreq = None
            self.pos += 1
        if self.sreqs:
            from mpi4py import MPI
            MPI.Request.Waitall(self.sreqs)
            self.sreqs = []
        return True


# -- the program -----------------------------------------------------------------------
def main(n: int = 20000, nb: int = 128, p: int = 4, q: int = 4, pmap: str = "row",
         pfact: str = "right", nbmin: int = 4, ndiv: int = 2, bcast: str = "1ringM",
         depth: int = 1, swap: str = "mix", swap_threshold: int = 64,
         kernel: str = "primequest", pivot: str = "column", verbose: bool = True
         ) -> dict[str, float]:
    """Run HPL's factorization and solve; return this rank's counters (rank 0: time, gflops)."""
    from mpi4py import MPI  # bsim's namespace inside a simulation, real mpi4py otherwise
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    _check(n, nb, p, q, pmap, pfact, nbmin, ndiv, bcast, depth, swap, swap_threshold, pivot, size)
    km = KernelModel.build(kernel)
    dbl = MPI.DOUBLE
    _BUF[0] = bsim.Buffer if bsim.in_simulation() else bsim.buffer
    buffer = _BUF[0]
    myrow, mycol = (rank // q, rank % q) if pmap == "row" else (rank % p, rank // p)
    rowc = comm.Split(myrow, mycol)       # a process row: q processes, rank = mycol
    colc = comm.Split(mycol + p * q, myrow)   # a process column: p processes, rank = myrow
    cnt = {"pfact": 0.0, "pfact_redundant": 0.0, "dtrsm": 0.0, "dtrsm_redundant": 0.0,
           "dgemm": 0.0, "backsolve": 0.0}
    mp_tot, nq_tot = numroc(n, nb, myrow, p), numroc(n + 1, nb, mycol, q)
    npan = (n + nb - 1) // nb
    pcache = _SCHEDULES.setdefault((km.spec, nbmin, ndiv), {})   # shared by all ranks
    gcache: dict[int, tuple[int, int, int, int, int, int]] = {}

    def geom(k: int) -> tuple[int, int, int, int, int, int]:
        """(j, jb, prow, pcol, local rows >= j, local columns >= j + jb) of panel k."""
        g = gcache.get(k)
        if g is None:
            if len(gcache) > 4:
                gcache.clear()
            j = k * nb
            jb = min(nb, n - j)
            g = gcache[k] = (j, jb, k % p, k % q, mp_tot - numroc(j, nb, myrow, p),
                             nq_tot - numroc(j + jb, nb, mycol, q))
        return g

    def factor(k: int) -> None:
        """Panel factorization on this process column (HPL_pdfact)."""
        j, jb, prow, _, mp, _ = geom(k)
        diag = myrow == prow
        times, tail, fl, trsm = _pfact_schedule(mp, jb, diag, nbmin, ndiv, km, pcache)
        cnt["pfact"] += fl + (trsm if diag else 0.0)   # the recursion's dtrsm is redundant
        cnt["pfact_redundant"] += 0.0 if diag else trsm
        if p == 1:
            bsim.add_time(sum(times) + tail)
            return
        plan = _bexchange_plan(myrow, p, prow)
        if pivot == "panel":
            bsim.add_time(sum(times))
            _exchange(colc, plan, buffer(jb * (2 * jb + 4), dbl), TAG_PIV)
        else:
            buf = buffer(2 * jb + 4, dbl)
            for t in times:
                bsim.add_time(t)
                _exchange(colc, plan, buf, TAG_PIV)
        bsim.add_time(tail)

    def start_bcast(k: int) -> _Transfer | _Ibcast:
        """This rank's part of panel k's broadcast along its process row."""
        _, jb, prow, pcol, mp, _ = geom(k)
        count = (mp - (jb if myrow == prow else 0)) * jb + jb * jb + jb   # L2, L1, pivots
        if bcast == "ibcast":
            return _Ibcast(rowc, buffer(count, dbl), pcol)
        d = (mycol - pcol) % q
        return _Transfer(rowc, bcast_steps(bcast, d, q, count), pcol, q, dbl)

    def swap_rows(k: int, ncols: int) -> None:
        """Apply panel k's row interchanges to *ncols* local columns (HPL_pdlaswp)."""
        if p == 1 or ncols <= 0:
            return
        _, jb, prow, _, _, _ = geom(k)
        total = jb * ncols
        if swap == "allgatherv":                # every process row gets all jb rows of U
            if jb % p == 0:                     # equal pieces: a plain Allgather
                colc.Allgather(buffer(total // p, dbl), buffer(total, dbl))
                return
            counts = [c * ncols for c in _pieces(jb, p)]
            colc.Allgatherv(buffer(counts[(myrow - prow) % p], dbl),
                            [buffer(total, dbl), counts[-prow % p:] + counts[:-prow % p]])
            return
        use_long = swap == "long" or (swap == "mix" and ncols > swap_threshold)
        if not use_long:
            _exchange(colc, _bexchange_plan(myrow, p, prow), buffer(total, dbl), TAG_SW)
        else:
            d = (myrow - prow) % p
            _Transfer(colc, _spread_roll_steps(d, p, total), prow, p, dbl).progress(True, TAG_SW)

    def update_time(k: int, ncols: int) -> float:
        _, jb, prow, _, mp, _ = geom(k)
        m2 = mp - (jb if myrow == prow else 0)   # rows below the diagonal block
        trsm = float(jb * (jb - 1) * ncols)
        gemm = 2.0 * m2 * ncols * jb
        if myrow == prow:
            cnt["dtrsm"] += trsm
        else:
            cnt["dtrsm_redundant"] += trsm
        cnt["dgemm"] += gemm
        return km.dtrsm(trsm) + km.dgemm(gemm)

    def update(k: int, ncols: int, probe: _Transfer | _Ibcast | None) -> None:
        """Swap and update *ncols* trailing local columns with panel k, probing *probe*."""
        swap_rows(k, ncols)
        if probe is None or not probe.pollable or probe.pos >= len(probe.steps):
            if ncols > 0:
                bsim.add_time(update_time(k, ncols))
            return
        done = probe.progress(False)
        left = ncols
        while left > 0 and not done:          # chunks of nb columns, probing in between
            c = min(nb, left)
            bsim.add_time(update_time(k, c))
            left -= c
            done = probe.progress(False)
        if left > 0:
            bsim.add_time(update_time(k, left))

    if rank == 0 and len(_SCHEDULES) > 16:
        _SCHEDULES.clear()
    comm.Barrier()
    t0 = MPI.Wtime()
    host0 = _time.perf_counter()
    if depth == 0:
        for k in range(npan):
            if mycol == k % q:
                factor(k)
            start_bcast(k).progress(True)
            update(k, geom(k)[5], None)
    else:
        if mycol == 0:
            factor(0)
        bc = start_bcast(0)
        if mycol == 0:
            bc.progress(False)                     # the root's first sends
        for k in range(npan):
            bc.progress(True)                      # panel k: received and forwarded
            _, jb, _, _, _, ntrail = geom(k)
            nxt = k + 1
            if nxt < npan and mycol == nxt % q:
                jb1 = geom(nxt)[1]
                update(k, min(jb1, ntrail), None)  # the next panel's columns first
                factor(nxt)
                bc = start_bcast(nxt)
                bc.progress(False)                 # the root's first sends
                update(k, ntrail - jb1, bc)        # the rest, progressing the broadcast
            elif nxt < npan:
                bc = start_bcast(nxt)
                update(k, ntrail, bc)
            else:
                update(k, ntrail, None)
    _backsolve(n, nb, p, q, myrow, mycol, rowc, colc, km, cnt, dbl, mp_tot)
    elapsed = MPI.Wtime() - t0
    tmax = comm.allreduce(elapsed, op=MPI.MAX)
    out = dict(cnt)
    if rank == 0:
        out["time"] = tmax
        out["gflops"] = hpl_flops(n) / tmax / 1e9 if tmax > 0 else math.inf
        out["host_seconds"] = _time.perf_counter() - host0
        if verbose:
            enc = f"W{'R' if depth else 'C'}{depth}{'R' if pmap == 'row' else 'C'}"
            print(f"{'T/V':<10}{'N':>9}{'NB':>6}{'P':>5}{'Q':>5}{'Time':>16}{'Gflops':>16}")
            print(f"{enc + pfact[0].upper() + bcast:<10}{n:>9}{nb:>6}{p:>5}{q:>5}"
                  f"{tmax:>16.2f}{out['gflops']:>16.4e}")
    return out


def _exchange(comm: Any, plan: list[tuple[int, int]], buf: Any, tag: int) -> None:
    """One bi-directional exchange: per step send to dest and/or receive from source."""
    for dest, source in plan:
        if dest >= 0:
            req = comm.Isend(buf, dest=dest, tag=tag)
            if source >= 0:
                comm.Recv(buf, source=source, tag=tag)
            req.Wait()
        else:
            comm.Recv(buf, source=source, tag=tag)


def _pfact_schedule(mp: int, jb: int, diag: bool, nbmin: int, ndiv: int, km: KernelModel,
                    cache: dict[Any, Any]) -> tuple[list[float], float, float, float]:
    """Compute before each of the *jb* pivot exchanges of a panel, for one process.

    Recursive factorization (HPL_pdrpan*): a panel wider than *nbmin* is cut
    into *ndiv* parts; each part is factored recursively, then the columns to
    its right are updated by ``dtrsm`` (``w x w`` unit lower on ``w x rest``,
    done redundantly by every process of the column) and ``dgemm`` (active
    rows ``x rest x w``).  A leaf of ``<= nbmin`` columns is factored column
    by column: ``idamax`` over the active rows, the exchange, then ``dscal``
    and the rank-1 update of the leaf's remaining columns (``dgemv`` rate).
    The process row owning the diagonal block loses one active row per
    column (*diag*).  Returns ``(times, tail, flops, trsm_flops)``:
    ``times[i]`` is the compute between exchange ``i - 1`` and ``i``, ``tail``
    the compute after the last one, ``flops`` this process's own flops
    without the recursion's ``dtrsm``, ``trsm_flops`` those (per process).
    Vectorized over columns (numpy); cached per ``(mp, jb, diag)``.
    """
    import numpy as np
    key = (mp, jb, diag)
    hit = cache.get(key)
    if hit is not None:
        return hit
    shape = cache.get((jb, "shape"))
    if shape is None:
        shape = cache[(jb, "shape")] = _recursion_shape(jb, nbmin, ndiv)
    leaf_end, updates = shape
    after = np.zeros(jb)                 # recursion update time after column i
    acc = [0.0, 0.0]                     # gemm flops, trsm flops
    off = 1 if diag else 0
    for last, part, rest, c in updates:
        trsm = float(part * (part - 1) * rest)
        gemm = 2.0 * max(mp - (c if diag else 0), 0) * rest * part
        after[last] += km.dtrsm(trsm) + km.dgemm(gemm)
        acc[0] += gemm
        acc[1] += trsm
    i = np.arange(jb)
    rows = np.maximum(mp - (i + 1) * off, 0).astype(float)   # active rows below column i
    fa = rows + off                                          # idamax length
    fl = rows * (1 + 2 * (leaf_end - i - 1))                 # dscal + rank-1 update
    post = km.vec("dgemv", fl) + after                       # compute after exchange i
    times = km.vec("idamax", fa)
    times[1:] += post[:-1]
    result = (times.tolist(), float(post[-1]) if jb else 0.0,
              float(fa.sum() + fl.sum()) + acc[0], acc[1])
    cache[key] = result
    return result


def _recursion_shape(jb: int, nbmin: int, ndiv: int
                     ) -> tuple[Any, list[tuple[int, int, int, int]]]:
    """Leaf end per column, and the recursion's updates ``(last column, part, rest, c)``."""
    import numpy as np
    leaf_end = np.empty(jb, dtype=np.int64)
    updates: list[tuple[int, int, int, int]] = []

    def rec(c0: int, w: int) -> None:
        if w <= nbmin:
            leaf_end[c0:c0 + w] = c0 + w
            return
        c = c0
        for part in _pieces(w, min(ndiv, w)):
            rec(c, part)
            c += part
            if c0 + w - c > 0:
                updates.append((c - 1, part, c0 + w - c, c))

    rec(0, jb)
    return leaf_end, updates


def _backsolve(n: int, nb: int, p: int, q: int, myrow: int, mycol: int, rowc: Any, colc: Any,
               km: KernelModel, cnt: dict[str, float], dbl: Any, mp_tot: int) -> None:
    """Backward substitution ``U x = y`` (HPL_pdtrsv), block by block from the last.

    For block ``k`` (owner ``(k mod p, k mod q)``): the owner receives the
    partial sums of ``y_k`` from the process column to its right (``jb``
    doubles), solves the ``jb x jb`` triangle (``dgemv`` rate, ``jb^2``
    flops), and broadcasts ``x_k`` down its process column (``Bcast``); that
    column updates its local rows above block ``k`` (``dgemv``, 2 flops per
    entry) and passes the partial sums of ``y_{k-1}`` to the left.
    """
    npan = (n + nb - 1) // nb
    for k in range(npan - 1, -1, -1):
        j = k * nb
        jb = min(nb, n - j)
        prow, pcol = k % p, k % q
        if mycol != pcol:
            continue
        if myrow == prow and k < npan - 1 and q > 1:
            rowc.Recv(_BUF[0](jb, dbl), source=(pcol + 1) % q, tag=TAG_BS)
        if myrow == prow:
            bsim.add_time(km.dgemv(float(jb * jb)))
            cnt["backsolve"] += float(jb * jb)
        xk = _BUF[0](jb, dbl)
        if p > 1:
            colc.Bcast(xk, root=prow)
        above = numroc(j, nb, myrow, p)
        if above:
            fl = 2.0 * above * jb
            bsim.add_time(km.dgemv(fl))
            cnt["backsolve"] += fl
        if k > 0 and myrow == (k - 1) % p and q > 1:
            rowc.Send(_BUF[0](min(nb, n - (k - 1) * nb), dbl), dest=(pcol - 1) % q,
                      tag=TAG_BS)


def _check(n: int, nb: int, p: int, q: int, pmap: str, pfact: str, nbmin: int, ndiv: int,
           bcast: str, depth: int, swap: str, swap_threshold: int, pivot: str, size: int) -> None:
    if size != p * q:
        raise ValueError(f"hpl: needs p*q = {p * q} ranks, running on {size}")
    for name, value in (("n", n), ("nb", nb), ("p", p), ("q", q), ("nbmin", nbmin),
                        ("ndiv", ndiv)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"hpl: {name} must be an int >= 1, got {value!r}")
    if ndiv < 2:
        raise ValueError(f"hpl: ndiv must be >= 2, got {ndiv}")
    if swap_threshold < 0:
        raise ValueError(f"hpl: swap_threshold must be >= 0, got {swap_threshold}")
    choices: tuple[tuple[str, Any, tuple[Any, ...]], ...] = (
        ("pmap", pmap, ("row", "col")), ("pfact", pfact, PFACTS),
        ("bcast", bcast, BCASTS), ("depth", depth, (0, 1)),
        ("swap", swap, SWAPS), ("pivot", pivot, ("column", "panel")))
    for name, value, valid in choices:
        if value not in valid:
            raise ValueError(f"hpl: unknown {name} {value!r}; valid: "
                             f"{', '.join(map(str, valid))}")


SKELETON = register(Skeleton(
    name="hpl",
    main=main,
    description="HPL: right-looking LU on a p x q grid with HPL's panel bcasts, row swaps, "
                "look-ahead and back solve",
    params={
        "n": Param("problem size N (matrix N x N+1)"),
        "nb": Param("block size NB"),
        "p": Param("process rows P"),
        "q": Param("process columns Q (ranks = p*q)"),
        "pmap": Param("process mapping: row (row-major) or col (column-major)"),
        "pfact": Param("panel factorization leaf: left, crout, right"),
        "nbmin": Param("recursion stops at NBMIN columns"),
        "ndiv": Param("sub-panels per recursion level NDIV"),
        "bcast": Param("panel broadcast: " + ", ".join(BCASTS) + " (MPI_Ibcast)"),
        "depth": Param("look-ahead depth (0 or 1)"),
        "swap": Param("row swaps: bexchange, long (spread-roll), mix, allgatherv "
                             "(one MPI_Allgatherv)"),
        "swap_threshold": Param("mix: binary exchange up to this many local columns"),
        "kernel": Param("kernel times: machine preset, flat:rate=R, "
                                      "table:path=F"),
        "pivot": Param("pivot exchange per column (HPL) or merged per panel"),
        "verbose": Param("rank 0 prints HPL's result line"),
    },
    ranks=lambda prm: prm["p"] * prm["q"],
    machine_param=("kernel", "hpl_blas"),
))

if __name__ == "__main__":
    main()
