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
few integers per panel.  Every rank returns a dict of its flop counters, and under
``kernel_flops`` the trailing update's ``dgemm`` and ``dtrsm`` flops and modelled seconds,
which the peak check bounds kernel by kernel (``bsim/machines/peak.py``);
rank 0's also holds ``time`` (max over ranks, seconds) and ``gflops``
(``(2/3 n^3 + 3/2 n^2) / time / 1e9``, as HPL reports) and prints HPL's
result line.
"""

from __future__ import annotations

import math
import time as _time
from typing import Any

import bsim
from bsim.machines.kernels import MachineKernel
from bsim.machines.peak import KERNEL_FLOPS

from .hpl_kernels import FIT_UNITS, KERNELS, KernelModel, generic_kernel
from .hpl_patterns import (
    BCASTS,
    BUFFER,
    TAG_BS,
    TAG_PIV,
    TAG_SW,
    Ibcast,
    Transfer,
    bcast_steps,
    bexchange_plan,
    global_flops,
    numroc,
    panel_flops,
    pieces,
    spread_roll_steps,
)
from .models.hpl import hpl_flops
from .registry import Param, Skeleton, grid, register

__all__ = ["main", "SKELETON", "KernelModel", "KERNELS", "numroc", "BCASTS", "SWAPS",
           "PFACTS", "panel_flops", "global_flops", "bcast_steps", "bexchange_plan"]

SWAPS = ("bexchange", "long", "mix", "allgatherv")
PFACTS = ("left", "crout", "right")
_SCHEDULES: dict[Any, dict[Any, Any]] = {}   # panel compute schedules, shared by ranks
#: A panel's geometry on one rank: (j, jb, prow, pcol, local rows >= j, local columns >= j + jb)
Panel = tuple[int, int, int, int, int, int]


# -- the program -----------------------------------------------------------------------
def main(n: int = 20000, nb: int = 128, p: int = 4, q: int = 4, pmap: str = "row",
         pfact: str = "right", nbmin: int = 4, ndiv: int = 2, bcast: str = "1ringM",
         depth: int = 1, swap: str = "mix", swap_threshold: int = 64,
         kernel: str = "primequest", pivot: str = "column", verbose: bool = True
         ) -> dict[str, Any]:
    """Run HPL's factorization and solve; return this rank's counters (rank 0: time, gflops)."""
    from mpi4py import MPI  # bsim's namespace inside a simulation, real mpi4py otherwise
    comm = MPI.COMM_WORLD
    _check(n, nb, p, q, pmap, pfact, nbmin, ndiv, bcast, depth, swap, swap_threshold, pivot,
           comm.Get_size())
    BUFFER[0] = bsim.Buffer if bsim.in_simulation() else bsim.buffer
    lu = _Factorization(MPI, comm, n, nb, p, q, pmap, nbmin, ndiv, bcast, swap,
                        swap_threshold, KernelModel.build(kernel), pivot)
    if comm.Get_rank() == 0 and len(_SCHEDULES) > 16:
        _SCHEDULES.clear()
    comm.Barrier()
    t0 = MPI.Wtime()
    host0 = _time.perf_counter()
    if depth == 0:
        lu.factor_without_lookahead()
    else:
        lu.factor_with_lookahead()
    _backsolve(n, nb, p, q, lu.myrow, lu.mycol, lu.rowc, lu.colc, lu.km, lu.cnt, lu.dbl,
               lu.mp_tot)
    tmax = comm.allreduce(MPI.Wtime() - t0, op=MPI.MAX)
    out: dict[str, Any] = dict(lu.cnt)
    out[KERNEL_FLOPS] = lu.kernel_flops
    if comm.Get_rank() == 0:
        out["time"] = tmax
        out["gflops"] = hpl_flops(n) / tmax / 1e9 if tmax > 0 else math.inf
        out["host_seconds"] = _time.perf_counter() - host0
        if verbose:
            _print_result(n, nb, p, q, pmap, pfact, bcast, depth, tmax, out["gflops"])
    return out


def _print_result(n: int, nb: int, p: int, q: int, pmap: str, pfact: str, bcast: str,
                  depth: int, tmax: float, gflops: float) -> None:
    """HPL's result line (``T/V`` encodes depth, mapping, factorization and broadcast)."""
    enc = f"W{'R' if depth else 'C'}{depth}{'R' if pmap == 'row' else 'C'}"
    print(f"{'T/V':<10}{'N':>9}{'NB':>6}{'P':>5}{'Q':>5}{'Time':>16}{'Gflops':>16}")
    print(f"{enc + pfact[0].upper() + bcast:<10}{n:>9}{nb:>6}{p:>5}{q:>5}"
          f"{tmax:>16.2f}{gflops:>16.4e}")


class _Factorization:
    """One rank's part of HPL's right-looking LU, one method per step of a panel.

    Holds the rank's place in the ``p x q`` grid, its row and column
    communicators, the kernel model and the flop counters (``cnt``).
    """

    def __init__(self, MPI: Any, comm: Any, n: int, nb: int, p: int, q: int, pmap: str,
                 nbmin: int, ndiv: int, bcast: str, swap: str, swap_threshold: int,
                 km: KernelModel, pivot: str) -> None:
        rank = comm.Get_rank()
        self.n, self.nb, self.p, self.q = n, nb, p, q
        self.nbmin, self.ndiv, self.bcast, self.swap = nbmin, ndiv, bcast, swap
        self.swap_threshold, self.km, self.pivot = swap_threshold, km, pivot
        self.dtrsm, self.dgemm = km.dtrsm, km.dgemm   # the update's kernels, looked up once
        self.dbl = MPI.DOUBLE
        self.buffer = BUFFER[0]
        self.myrow, self.mycol = (rank // q, rank % q) if pmap == "row" else (rank % p, rank // p)
        self.rowc = comm.Split(self.myrow, self.mycol)           # a process row: rank = mycol
        self.colc = comm.Split(self.mycol + p * q, self.myrow)   # a process column: rank = myrow
        self.cnt = {"pfact": 0.0, "pfact_redundant": 0.0, "dtrsm": 0.0, "dtrsm_redundant": 0.0,
                    "dgemm": 0.0, "backsolve": 0.0}
        # the trailing update's kernels, [flops, modelled seconds] each (bsim/machines/peak.py)
        self.kernel_flops = {"dgemm": [0.0, 0.0], "dtrsm": [0.0, 0.0]}
        self.mp_tot = numroc(n, nb, self.myrow, p)
        self.nq_tot = numroc(n + 1, nb, self.mycol, q)
        self.npan = (n + nb - 1) // nb
        self.pcache = _SCHEDULES.setdefault((km.spec, nbmin, ndiv), {})   # shared by all ranks
        # the trailing updates' sums, added here as they come and handed to cnt and
        # kernel_flops at the end (totals()): the same sums, without a dict per update
        self.dtrsm_own = self.dtrsm_redundant = self.dgemm_flops = 0.0
        self.dtrsm_flops = self.dtrsm_seconds = self.dgemm_seconds = 0.0

    def geom(self, k: int) -> Panel:
        """Panel k's geometry, made once a rank and panel and passed to the steps below:
        (j, jb, prow, pcol, local rows >= j, local columns >= j + jb)."""
        nb, p, q = self.nb, self.p, self.q
        j = k * nb
        jb = min(nb, self.n - j)
        return (j, jb, k % p, k % q, self.mp_tot - numroc(j, nb, self.myrow, p),
                self.nq_tot - numroc(j + jb, nb, self.mycol, q))

    def totals(self) -> None:
        """Add the trailing updates' sums to the flop counters and ``kernel_flops``."""
        cnt, kf = self.cnt, self.kernel_flops
        cnt["dtrsm"] += self.dtrsm_own
        cnt["dtrsm_redundant"] += self.dtrsm_redundant
        cnt["dgemm"] += self.dgemm_flops
        kf["dtrsm"][0] += self.dtrsm_flops
        kf["dtrsm"][1] += self.dtrsm_seconds
        kf["dgemm"][0] += self.dgemm_flops
        kf["dgemm"][1] += self.dgemm_seconds

    def factor(self, g: Panel) -> None:
        """Panel factorization on this process column (HPL_pdfact)."""
        j, jb, prow, _, mp, _ = g
        diag = self.myrow == prow
        times, tail, fl, trsm = _pfact_schedule(mp, jb, diag, self.nbmin, self.ndiv, self.km,
                                                self.pcache)
        cnt = self.cnt
        cnt["pfact"] += fl + (trsm if diag else 0.0)   # the recursion's dtrsm is redundant
        cnt["pfact_redundant"] += 0.0 if diag else trsm
        if self.p == 1:
            bsim.add_time(sum(times) + tail)
            return
        plan = bexchange_plan(self.myrow, self.p, prow)
        if self.pivot == "panel":
            bsim.add_time(sum(times))
            _exchange(self.colc, plan, self.buffer(jb * (2 * jb + 4), self.dbl), TAG_PIV)
        else:
            buf = self.buffer(2 * jb + 4, self.dbl)
            for t in times:
                bsim.add_time(t)
                _exchange(self.colc, plan, buf, TAG_PIV)
        bsim.add_time(tail)

    def start_bcast(self, g: Panel) -> Transfer | Ibcast:
        """This rank's part of panel g's broadcast along its process row."""
        _, jb, prow, pcol, mp, _ = g
        count = (mp - (jb if self.myrow == prow else 0)) * jb + jb * jb + jb   # L2, L1, pivots
        if self.bcast == "ibcast":
            return Ibcast(self.rowc, self.buffer(count, self.dbl), pcol, self.q)
        d = (self.mycol - pcol) % self.q
        return Transfer(self.rowc, bcast_steps(self.bcast, d, self.q, count), pcol, self.q,
                        self.dbl)

    def swap_rows(self, g: Panel, ncols: int) -> None:
        """Apply panel g's row interchanges to *ncols* local columns (HPL_pdlaswp)."""
        p, myrow, colc, buffer, dbl = self.p, self.myrow, self.colc, self.buffer, self.dbl
        if p == 1 or ncols <= 0:
            return
        _, jb, prow, _, _, _ = g
        total = jb * ncols
        if self.swap == "allgatherv":           # every process row gets all jb rows of U
            if jb % p == 0:                     # equal pieces: a plain Allgather
                colc.Allgather(buffer(total // p, dbl), buffer(total, dbl))
                return
            counts = [c * ncols for c in pieces(jb, p)]
            colc.Allgatherv(buffer(counts[(myrow - prow) % p], dbl),
                            [buffer(total, dbl), counts[-prow % p:] + counts[:-prow % p]])
            return
        use_long = self.swap == "long" or (self.swap == "mix" and ncols > self.swap_threshold)
        if not use_long:
            _exchange(colc, bexchange_plan(myrow, p, prow), buffer(total, dbl), TAG_SW)
        else:
            d = (myrow - prow) % p
            Transfer(colc, spread_roll_steps(d, p, total), prow, p, dbl).progress(True, TAG_SW)

    def update_time(self, g: Panel, ncols: int) -> float:
        """Seconds of the trailing update of *ncols* columns with panel g (dtrsm + dgemm)."""
        _, jb, prow, _, mp, _ = g
        diag = self.myrow == prow
        m2 = mp - jb if diag else mp   # rows below the diagonal block
        trsm = float(jb * (jb - 1) * ncols)
        gemm = 2.0 * m2 * ncols * jb
        if diag:
            self.dtrsm_own += trsm
        else:
            self.dtrsm_redundant += trsm
        t_trsm, t_gemm = self.dtrsm(trsm), self.dgemm(gemm)
        self.dtrsm_flops += trsm
        self.dtrsm_seconds += t_trsm
        self.dgemm_flops += gemm
        self.dgemm_seconds += t_gemm
        return t_trsm + t_gemm

    def update(self, g: Panel, ncols: int, probe: Transfer | Ibcast | None) -> None:
        """Swap and update *ncols* trailing local columns with panel g, probing *probe*."""
        self.swap_rows(g, ncols)
        if probe is None or not probe.pollable or probe.pos >= len(probe.steps):
            if ncols > 0:
                bsim.add_time(self.update_time(g, ncols))
            return
        done = probe.progress(False)
        left = ncols
        while left > 0 and not done:          # chunks of nb columns, probing in between
            c = min(self.nb, left)
            bsim.add_time(self.update_time(g, c))
            left -= c
            done = probe.progress(False)
        if left > 0:
            bsim.add_time(self.update_time(g, left))

    def factor_without_lookahead(self) -> None:
        """``depth=0``: per panel, factor, broadcast, then update everything."""
        q, mycol = self.q, self.mycol
        for k in range(self.npan):
            g = self.geom(k)
            if mycol == k % q:
                self.factor(g)
            self.start_bcast(g).progress(True)
            self.update(g, g[5], None)
        self.totals()

    def factor_with_lookahead(self) -> None:
        """``depth=1``: the next panel's owner updates its columns, factors and starts
        broadcasting it before the rest of the update; the others probe for it."""
        q, mycol, npan = self.q, self.mycol, self.npan
        g = self.geom(0)
        if mycol == 0:
            self.factor(g)
        bc = self.start_bcast(g)
        if mycol == 0:
            bc.progress(False)                     # the root's first sends
        for k in range(npan):
            bc.progress(True)                      # panel k: received and forwarded
            ntrail = g[5]
            nxt = k + 1
            if nxt == npan:
                self.update(g, ntrail, None)
                break
            g1 = self.geom(nxt)
            if mycol == nxt % q:
                jb1 = g1[1]
                self.update(g, min(jb1, ntrail), None)  # the next panel's columns first
                self.factor(g1)
                bc = self.start_bcast(g1)
                bc.progress(False)                 # the root's first sends
                self.update(g, ntrail - jb1, bc)   # the rest, progressing the broadcast
            else:
                bc = self.start_bcast(g1)
                self.update(g, ntrail, bc)
            g = g1
        self.totals()


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
        for part in pieces(w, min(ndiv, w)):
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
            rowc.Recv(BUFFER[0](jb, dbl), source=(pcol + 1) % q, tag=TAG_BS)
        if myrow == prow:
            bsim.add_time(km.dgemv(float(jb * jb)))
            cnt["backsolve"] += float(jb * jb)
        xk = BUFFER[0](jb, dbl)
        if p > 1:
            colc.Bcast(xk, root=prow)
        above = numroc(j, nb, myrow, p)
        if above:
            fl = 2.0 * above * jb
            bsim.add_time(km.dgemv(fl))
            cnt["backsolve"] += fl
        if k > 0 and myrow == (k - 1) % p and q > 1:
            rowc.Send(BUFFER[0](min(nb, n - (k - 1) * nb), dbl), dest=(pcol - 1) % q,
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
        "n": Param("problem size N (matrix N x N+1)", minimum=1),
        "nb": Param("block size NB", minimum=1),
        "p": Param("process rows P", minimum=1),
        "q": Param("process columns Q (ranks = p*q)", minimum=1),
        "pmap": Param("process mapping: row (row-major) or col (column-major)"),
        "pfact": Param("panel factorization leaf: left, crout, right"),
        "nbmin": Param("recursion stops at NBMIN columns", minimum=1),
        "ndiv": Param("sub-panels per recursion level NDIV", minimum=2),
        "bcast": Param("panel broadcast: " + ", ".join(BCASTS) + " (MPI_Ibcast)"),
        "depth": Param("look-ahead depth (0 or 1)", minimum=0),
        "swap": Param("row swaps: bexchange, long (spread-roll), mix, allgatherv "
                             "(one MPI_Allgatherv)"),
        "swap_threshold": Param("mix: binary exchange up to this many local columns", minimum=0),
        "kernel": Param("kernel times: machine preset, flat:rate=R, "
                                      "table:path=F"),
        "pivot": Param("pivot exchange per column (HPL) or merged per panel"),
        "verbose": Param("rank 0 prints HPL's result line"),
    },
    ranks=lambda prm: prm["p"] * prm["q"],
    machine_kernel=MachineKernel(param="kernel", table="hpl_blas", keys=KERNELS,
                                 fit_units=FIT_UNITS, generic=generic_kernel,
                                 spec_kinds=("flat", "table")),
    flops=lambda prm, _returns: hpl_flops(prm["n"]),
    scale=lambda n: grid(n, 2, "q", "p"),   # HPL: P <= Q
))

if __name__ == "__main__":
    main()
