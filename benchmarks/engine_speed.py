"""Engine speed and memory at scale: two workloads on 4,096 to 1,048,576 virtual ranks.

First, in one sitting (every workload in its own subprocess, the five alternated
``--repeat`` times, the fastest of each shown with every run's CPU seconds), CPU and wall
seconds of the simulation loop at 4,096 ranks, 10 iterations, for:

* ``halo``: ``skeletons.halo2d.main`` (4 ``Irecv``, 4 ``Isend``, ``Waitall``, ``add_time``
  a rank and iteration: 409,600 operations), protocol ``bsim``, no contention;
* ``halo-py``: the same with ``BSIM_PURE_PYTHON=1``: the hot path's modules
  (``bsim.engine.compiled.TYPED``) run as Python, as on an install without a C compiler;
* ``sendrecv``: :func:`halo_sendrecv`, the same exchange as four blocking ``Sendrecv``
  (``PROC_NULL`` at the edges) and ``add_time`` (368,640 operations);
* ``arrays``: :func:`halo_arrays`, the halo's calls with numpy arrays of 64 doubles as an
  unmodified mpi4py program passes them, the data copied (409,600 operations);
* ``simpy``: raw SimPy, 4,096 processes yielding 100 timeouts each (409,600);
* ``floor``: :func:`greenlet_floor`, the halo's skeleton calling no-op methods with one
  greenlet switch a rank and iteration to a round-robin deque: no simulator at all;

with each rate's ratio to SimPy's and the floor's over it: CPU seconds hold as ratios
on a machine shared with other work, where wall seconds do not.  Targets: the halo at
>= 1.5x SimPy's rate and within 3x the floor, the ``Sendrecv`` halo at >= 1.0x SimPy's, and
``halo-py`` no slower than the halo before the hot path was compiled.
``--sitting-only`` stops after this table.

Then, at scale:

* **ops/s**: simulated operations (MPI calls + ``add_time``, ``Result.total_ops``) per
  host second of the simulation loop (``Result.host_seconds``), for two workloads:

  - ``halo``: the 2-D halo exchange ``skeletons.halo2d.main`` (per iteration each rank
    posts 4 ``Irecv`` and 4 ``Isend``, one ``Waitall``, one ``add_time``: 10 operations);
  - ``ring``: :func:`ring_allreduce`, written here: per iteration each rank
    ``Sendrecv``s 8 bytes to its right ring neighbour (receiving from its left one), then
    ``comm.allreduce`` of one float (2 operations, both blocking);

  at 4,096, 65,536 and 1,048,576 ranks (``--max-ranks`` stops earlier, ``--quick`` runs
  4,096 only).  The halo runs 10 iterations up to 65,536 ranks and 2 at 1,048,576 (the
  first iteration starts every greenlet and costs more, so the 2-iteration case also
  runs at 4,096 ranks and is compared with that).  The ring runs 10 iterations at 4,096
  ranks and 2 from 65,536 on (``--ring-max-ranks`` stops it earlier; the script prints
  a projection for the scales it skips);
* each rate's ratio to the 4,096-rank rate of the same workload and iterations;
* a yardstick: raw SimPy timeouts per second, a plain ``simpy.Environment`` with as many
  processes as the run had ranks, each yielding ``env.timeout(d)`` at least 10 times
  (400,000 timeouts or more in all), timed in
  the same subprocess right after the bsim run (Python's default collector settings, as a
  user would run SimPy); the table gives ops/s / SimPy timeouts/s;
* the 4,096-rank runs are repeated (``--repeat``, default 3) and the fastest is shown
  with the SimPy rate of its own subprocess: a short run is easily disturbed;
* peak RSS of each run (each run in its own subprocess, so peaks do not mix; measured
  before the yardstick);
* memory per idle virtual rank: RSS of N ranks all blocked in a receive, minus the RSS
  before the run, divided by N; beside it a yardstick measured in a subprocess of its
  own: the RSS per bare greenlet (N greenlets each switched into once and suspended, as
  a rank's is), the floor of any greenlet-based rank on this interpreter (CPython gives
  each greenlet its own frame stack, and greenlet saves its part of the C stack).

Targets at scale: ops/s at 1,048,576 ranks >= 0.66 x the 4,096-rank figure; <= 7.1 KiB
per idle rank.  The 1,048,576-rank runs need several GiB of RAM and minutes each.

    python benchmarks/engine_speed.py [--quick] [--sitting-only] [--repeat N]
                                      [--max-ranks N] [--ring-max-ranks N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

NETWORK = "hockney:latency=1e-6,bandwidth=1e10"
SCALES = [(64, 64), (256, 256), (1024, 1024)]   # 4,096, 65,536, 1,048,576 ranks
BIG = 1 << 20                                    # from here on: few iterations
ITERATIONS = 10
BIG_ITERATIONS = 2
RING_BIG = 1 << 16                               # the ring: few iterations from here on
RING_LIMIT = 1 << 20
WORKLOADS = ("halo", "ring")


def ring_allreduce(iterations: int = 10, nbytes: int = 8) -> float:
    """Ring + allreduce skeleton: Sendrecv to the right neighbour, then allreduce."""
    import bsim
    from bsim import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    sbuf, rbuf = bsim.Buffer(nbytes), bsim.Buffer(nbytes)
    total = 0.0
    for _ in range(iterations):
        comm.Sendrecv(sbuf, dest=right, sendtag=7, recvbuf=rbuf, source=left, recvtag=7)
        total = comm.allreduce(1.0)
    return total


def _neighbours(rank: int, px: int, py: int, null: int) -> tuple[int, int, int, int]:
    """West, east, south and north of *rank* on a ``px x py`` grid; *null* off the edges."""
    i, j = rank % px, rank // px
    return (rank - 1 if i > 0 else null, rank + 1 if i < px - 1 else null,
            rank - px if j > 0 else null, rank + px if j < py - 1 else null)


def halo_sendrecv(px: int = 64, py: int = 64, iterations: int = 10, nbytes: int = 512,
                  t_compute: float = 1e-5) -> None:
    """The halo as four blocking ``Sendrecv`` a rank and iteration (east, west, north,
    south; ``PROC_NULL`` at the edges), then ``add_time``: 9 operations (a ``Sendrecv``
    counts as its send and its receive)."""
    import bsim
    from bsim import MPI
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    west, east, south, north = _neighbours(rank, px, py, MPI.PROC_NULL)
    b = [bsim.Buffer(nbytes) for _ in range(8)]
    for _ in range(iterations):
        comm.Sendrecv(b[0], dest=east, sendtag=1, recvbuf=b[1], source=west, recvtag=1)
        comm.Sendrecv(b[2], dest=west, sendtag=2, recvbuf=b[3], source=east, recvtag=2)
        comm.Sendrecv(b[4], dest=north, sendtag=3, recvbuf=b[5], source=south, recvtag=3)
        comm.Sendrecv(b[6], dest=south, sendtag=4, recvbuf=b[7], source=north, recvtag=4)
        bsim.add_time(t_compute)


def _process_grid(px: int, py: int) -> tuple[Any, Any, Any]:
    """The ranks as a ``py x px`` grid: (the rank's process row, its column, ``DOUBLE``)."""
    from bsim import MPI
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    return (comm.Split(rank // px, rank % px), comm.Split(rank % px + px * py, rank // px),
            MPI.DOUBLE)


def grid_collectives(px: int = 64, py: int = 64, iterations: int = 10, count: int = 512,
                     t_compute: float = 1e-5) -> None:
    """HPL's collectives (``skeletons/hpl.py`` with ``bcast="ibcast"``,
    ``swap="allgatherv"``): the ranks as a ``py x px`` grid split into process rows and
    columns; a rank and iteration posts an ``Ibcast`` of a panel on its row (root
    ``k % px``), takes part in an ``Allgather`` of ``count`` doubles on its column, waits
    for the broadcast, then ``add_time``."""
    import bsim
    row, col, dbl = _process_grid(px, py)
    for k in range(iterations):
        req = row.Ibcast(bsim.Buffer(count * 8, dbl), root=k % px)
        col.Allgather(bsim.Buffer(count, dbl), bsim.Buffer(count * py, dbl))
        req.Wait()
        bsim.add_time(t_compute)


def one_collective(px: int = 64, py: int = 64, iterations: int = 10, count: int = 512,
                   t_compute: float = 1e-5, call: str = "barrier") -> None:
    """One of ``grid_collectives``' calls alone, to count what it costs: a rank and
    iteration a ``Barrier`` on its column, an ``Ibcast`` on its row from member 0 and its
    ``Wait``, or an ``Allgather`` on its column (*call*), then ``add_time``."""
    import bsim
    row, col, dbl = _process_grid(px, py)
    for _ in range(iterations):
        if call == "ibcast":
            row.Ibcast(bsim.Buffer(count * 8, dbl), root=0).Wait()
        elif call == "allgather":
            col.Allgather(bsim.Buffer(count, dbl), bsim.Buffer(count * py, dbl))
        else:
            col.Barrier()
        bsim.add_time(t_compute)


def halo_arrays(px: int = 64, py: int = 64, iterations: int = 10, count: int = 64,
                t_compute: float = 1e-5) -> None:
    """The halo as an unmodified mpi4py program writes it: numpy arrays as buffers (the
    receives pass a bare array, the sends ``[array, MPI.DOUBLE]``, mpi4py's two idioms),
    ``PROC_NULL`` at the edges, ``Waitall``, ``add_time``: 10 operations a rank and
    iteration, as the placeholder halo's, plus the copies of real data."""
    import numpy as np

    import bsim
    from bsim import MPI
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    west, east, south, north = _neighbours(rank, px, py, MPI.PROC_NULL)
    r = [np.empty(count) for _ in range(4)]
    s = [[np.full(count, float(rank)), MPI.DOUBLE] for _ in range(4)]
    for _ in range(iterations):
        reqs = [comm.Irecv(r[0], source=west, tag=1), comm.Irecv(r[1], source=east, tag=2),
                comm.Irecv(r[2], source=south, tag=3), comm.Irecv(r[3], source=north, tag=4),
                comm.Isend(s[0], dest=east, tag=1), comm.Isend(s[1], dest=west, tag=2),
                comm.Isend(s[2], dest=north, tag=3), comm.Isend(s[3], dest=south, tag=4)]
        MPI.Request.Waitall(reqs)
        bsim.add_time(t_compute)


def greenlet_floor(nranks: int, iterations: int) -> tuple[int, float, float]:
    """The floor of any engine that keeps ranks as Python greenlets: the halo's skeleton
    (4 ``Irecv``, 4 ``Isend``, ``Waitall``, ``add_time`` a rank and iteration) calling
    no-op Python methods, one switch to a round-robin scheduler (a deque) per rank and
    iteration, no simulated time.  Returns (operations, CPU and wall seconds of the
    scheduling loop).  The clock covers what bsim's loop covers (``Engine.run_until``): the
    greenlets are made before it, as bsim makes its ranks' before its loop, and their first
    switch (the start of each rank's program) is inside it, as bsim's is."""
    from collections import deque

    import greenlet

    main = greenlet.getcurrent()

    class Comm:
        def Irecv(self, buf: Any, source: int, tag: int) -> None:
            return None

        def Isend(self, buf: Any, dest: int, tag: int) -> None:
            return None

        def Waitall(self, reqs: list[Any]) -> None:
            main.switch()

        def add_time(self, seconds: float) -> None:
            return None

    def rank_program(comm: Comm, rank: int) -> None:
        w, e, s, n = rank - 1, rank + 1, rank - 64, rank + 64
        b = [object() for _ in range(8)]
        for _ in range(iterations):
            reqs = [comm.Irecv(b[0], source=w, tag=1), comm.Irecv(b[1], source=e, tag=2),
                    comm.Irecv(b[2], source=s, tag=3), comm.Irecv(b[3], source=n, tag=4),
                    comm.Isend(b[4], dest=e, tag=1), comm.Isend(b[5], dest=w, tag=2),
                    comm.Isend(b[6], dest=n, tag=3), comm.Isend(b[7], dest=s, tag=4)]
            comm.Waitall(reqs)
            comm.add_time(1e-6)

    comm = Comm()
    ready = deque(greenlet.greenlet(rank_program) for _ in range(nranks))
    c0, w0 = time.process_time(), time.perf_counter()   # (bsim's loop starts its ranks too)
    for r, g in enumerate(ready):
        g.switch(comm, r)   # each runs to its first Waitall
    while ready:
        g = ready.popleft()
        g.switch()
        if not g.dead:
            ready.append(g)
    return nranks * iterations * 10, time.process_time() - c0, time.perf_counter() - w0


# -- child side: one measurement per process ----------------------------------------------

def _rss_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def simpy_timeouts(nprocs: int, total: int) -> tuple[int, float, float]:
    """Raw SimPy: *nprocs* processes yielding timeouts, at least *total* in all and at
    least 10 per process (so process start-up stays a small part at every scale).

    Returns (timeouts, wall and CPU seconds of ``env.run()``): the processes are made
    before the clock starts, as bsim makes its ranks before its loop.
    """
    import simpy
    per = max(10, -(-total // nprocs))
    env = simpy.Environment()

    def proc(env: simpy.Environment, d: float, k: int) -> Any:
        for _ in range(k):
            yield env.timeout(d)

    for i in range(nprocs):
        env.process(proc(env, 1e-6 * (1 + i % 16), per))
    c0, t0 = time.process_time(), time.perf_counter()
    env.run()
    return nprocs * per, time.perf_counter() - t0, time.process_time() - c0


def _bare_greenlet_kib(n: int) -> float:
    """RSS per greenlet of *n* greenlets, each switched into once and suspended in a Python
    function."""
    import gc

    import greenlet
    main = greenlet.getcurrent()
    gc.collect()
    before = _rss_kib()
    def body() -> None:   # a Python frame, as a rank's program: CPython's frame stack
        main.switch()

    lets = [greenlet.greenlet(body) for _ in range(n)]
    for g in lets:
        g.switch()
    per = (_rss_kib() - before) / n
    for g in lets:
        g.throw(greenlet.GreenletExit)
    return per


def _loop_clock() -> list[float]:
    """[CPU seconds, wall seconds] spent in ``Engine.run_until`` (the simulation loop, not
    the set-up), accumulated by a wrapper installed here."""
    from bsim.engine.core import Engine
    spent = [0.0, 0.0]
    loop = Engine.run_until

    def timed(self: Engine, end: float) -> None:
        c, w = time.process_time(), time.perf_counter()
        try:
            loop(self, end)
        finally:
            spent[0] += time.process_time() - c
            spent[1] += time.perf_counter() - w

    Engine.run_until = timed  # type: ignore[method-assign]
    return spent


def _sitting_child(mode: str, iters: int) -> dict[str, Any]:
    """One workload of the one-sitting table: operations, CPU and wall seconds."""
    if mode == "floor":
        ops, cpu, wall = greenlet_floor(4096, iters)
        return dict(ops=ops, cpu=cpu, wall=wall)
    if mode == "simpy":
        timeouts, wall, cpu = simpy_timeouts(4096, 4096 * iters * 10)
        return dict(ops=timeouts, cpu=cpu, wall=wall)
    import bsim
    spent = _loop_clock()
    if mode in ("halo", "halo-py"):   # halo-py: run() sets BSIM_PURE_PYTHON=1
        from skeletons.halo2d import main as halo
        res = bsim.simulate(halo, ranks=4096, network=NETWORK, protocol="bsim",
                            check_memory=False,
                            kwargs=dict(px=64, py=64, nx=4096, ny=4096, iterations=iters))
    else:
        res = bsim.simulate(halo_sendrecv if mode == "sendrecv" else halo_arrays, ranks=4096,
                            network=NETWORK, protocol="bsim", check_memory=False,
                            kwargs=dict(iterations=iters))
    from bsim.engine.compiled import TYPED, compiled_modules
    return dict(ops=res.total_ops, cpu=spent[0], wall=spent[1], elapsed=repr(res.elapsed),
                typed=set(TYPED) <= set(compiled_modules()))


SITTING = ("halo", "halo-py", "sendrecv", "arrays", "simpy", "floor")


def sitting(repeat: int, iters: int = ITERATIONS) -> dict[str, dict[str, Any]]:
    """The 4,096-rank workloads, each in its own subprocess, alternated *repeat* times;
    the fastest (CPU) run of each; prints the table with ratios."""
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in SITTING}
    for _ in range(repeat):
        for mode in SITTING:
            runs[mode].append(run("s-" + mode, 0, 0, iters))
    best = {m: min(rs, key=lambda r: r["cpu"] / r["ops"]) for m, rs in runs.items()}
    rate = {m: r["ops"] / r["cpu"] for m, r in best.items()}
    print(f"one sitting, 4,096 ranks, {iters} iterations, fastest of {repeat} alternated "
          f"runs (CPU seconds of the loop; wall beside it)")
    print(f"{'workload':>9} {'ops':>9} {'CPU s':>7} {'wall s':>7} {'ops/CPU-s':>10} "
          f"{'x SimPy':>8} {'/ floor':>8}  (CPU s of all runs)")
    for m, r in best.items():
        every = ", ".join(f"{x['cpu']:.2f}" for x in runs[m])
        print(f"{m:>9} {r['ops']:>9,} {r['cpu']:>7.3f} {r['wall']:>7.3f} {rate[m]:>10,.0f} "
              f"{rate[m] / rate['simpy']:>8.2f} {rate['floor'] / rate[m]:>8.2f}  ({every})",
              flush=True)
    hot = {m: r["typed"] for m, r in best.items() if "typed" in r}
    compiled = [m for m, c in hot.items() if c]
    print(f"the hot path ran compiled in {', '.join(compiled) or 'none'}, as Python in "
          f"{', '.join(m for m in hot if m not in compiled) or 'none'}")
    print("targets: halo >= 1.5 x SimPy and <= 3 x the floor; Sendrecv halo >= 1.0 x SimPy;\n"
          "         halo-py (hot path as Python) no slower than before it was compiled\n")
    return best


def _child(mode: str, px: int, py: int, iters: int) -> dict[str, Any]:
    import gc
    import resource

    import bsim
    from bsim import MPI
    if mode.startswith("s-"):
        return _sitting_child(mode[2:], iters)
    n = px * py
    if mode == "idle":   # every rank but 0 blocks in a receive; rank 0 measures RSS at t=1
        samples = {}

        def idle_measured() -> None:
            comm = MPI.COMM_WORLD
            if comm.rank == 0:
                bsim.add_time(1.0)
                comm.Iprobe(source=1)   # synchronises at t=1: every other rank is blocked
                samples["during"] = _rss_kib()
                for dst in range(1, comm.size):
                    comm.Send(bsim.Buffer(8), dest=dst)
            else:
                comm.Recv(bsim.Buffer(8), source=0)

        gc.collect()
        before = _rss_kib()
        bsim.simulate(idle_measured, ranks=n, check_memory=False, protocol="bsim")
        return dict(ranks=n, before_kib=before, during_kib=samples["during"],
                    per_rank_kib=(samples["during"] - before) / n)
    if mode == "greenlet":
        return dict(ranks=n, per_rank_kib=_bare_greenlet_kib(n))
    if mode in ("halo", "halo-py"):   # halo-py: run() sets BSIM_PURE_PYTHON=1
        from skeletons.halo2d import main as halo
        res = bsim.simulate(halo, ranks=n, network=NETWORK, check_memory=False,
                            kwargs=dict(px=px, py=py, nx=64 * px, ny=64 * py, iterations=iters),
                            protocol="bsim")
    else:
        res = bsim.simulate(ring_allreduce, ranks=n, network=NETWORK, check_memory=False,
                            kwargs=dict(iterations=iters), protocol="bsim")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = dict(ranks=n, ops=res.total_ops, events=res.events, host=res.host_seconds,
               peak_kib=peak, elapsed=res.elapsed)
    del res
    gc.collect()
    timeouts, seconds, _ = simpy_timeouts(n, 400_000)
    out.update(simpy_timeouts=timeouts, simpy_seconds=seconds)
    return out


def run(mode: str, px: int, py: int, iters: int) -> dict[str, Any]:
    """One measurement in a fresh subprocess (its own peak RSS).  The child's BLAS runs one
    thread (no workload calls it): a BLAS thread that numpy's import started was seen to
    add CPU seconds to the process's clock that the loop did not spend (CPU above wall)."""
    pure = "1" if mode.endswith("-py") else os.environ.get("BSIM_PURE_PYTHON", "")
    env = dict(os.environ, BSIM_PURE_PYTHON=pure)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode,
                          str(px), str(py), str(iters)],
                         check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def plan(limit: int, ring_limit: int) -> list[tuple[str, int, int, int]]:
    """(workload, px, py, iterations) of every run, smallest scale first.

    A workload that runs fewer iterations at a larger scale also runs them at 4,096 ranks,
    so each ratio compares rates over the same number of iterations.
    """
    runs = []
    for wl in WORKLOADS:
        top = limit if wl == "halo" else min(limit, ring_limit)
        scales = [(px, py) for px, py in SCALES if px * py <= top]
        iters = [ITERATIONS if px * py < (BIG if wl == "halo" else RING_BIG) else BIG_ITERATIONS
                 for px, py in scales]
        for k in sorted(set(iters), reverse=True):
            runs.append((wl, *SCALES[0], k))
        runs += [(wl, px, py, k) for (px, py), k in zip(scales, iters) if px * py > 4096]
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4,096 ranks only")
    ap.add_argument("--max-ranks", type=int, default=BIG,
                    help="largest scale to run (default 1,048,576)")
    ap.add_argument("--ring-max-ranks", type=int, default=RING_LIMIT,
                    help="largest scale of the ring + allreduce workload (default 1,048,576)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each 4,096-rank case; the fastest is shown (default 3)")
    ap.add_argument("--sitting-only", action="store_true",
                    help="only the one-sitting table (halo, Sendrecv halo, array halo, SimPy, "
                         "floor)")
    ap.add_argument("--child", nargs=4, metavar=("MODE", "PX", "PY", "ITERS"),
                    help=argparse.SUPPRESS)
    ns = ap.parse_args()
    if ns.child:
        mode, px, py, iters = ns.child
        print(json.dumps(_child(mode, int(px), int(py), int(iters))))
        return
    limit = 4096 if ns.quick else ns.max_ranks
    if limit < 4096:
        ap.error(f"--max-ranks {limit}: the smallest scale is 4,096")
    sitting(ns.repeat)
    if ns.sitting_only:
        return
    print(f"{'workload':>8} {'ranks':>9} {'iters':>5} {'ops':>11} {'host s':>8} "
          f"{'ops/s':>9} {'/4,096':>6} {'events/s':>9} {'SimPy t/s':>9} {'ops/SimPy':>9} "
          f"{'peak RSS MiB':>12}", flush=True)
    base: dict[tuple[str, int], float] = {}     # (workload, iterations) -> 4,096-rank rate
    rates: dict[tuple[str, int, int], tuple[float, float]] = {}
    last_host: dict[str, tuple[int, float]] = {}
    for wl, px, py, iters in plan(limit, ns.ring_max_ranks):
        n = px * py
        tries = [run(wl, px, py, iters) for _ in range(ns.repeat if n == 4096 else 1)]
        r = min(tries, key=lambda t: t["host"] / t["ops"])
        rate = r["ops"] / r["host"]
        simpy_rate = r["simpy_timeouts"] / r["simpy_seconds"]
        base.setdefault((wl, iters), rate)
        rates[(wl, n, iters)] = (rate, rate / simpy_rate)
        last_host[wl] = (n, r["host"])
        print(f"{wl:>8} {n:>9,} {iters:>5} {r['ops']:>11,} {r['host']:>8.2f} "
              f"{rate:>9,.0f} {rate / base[(wl, iters)]:>6.2f} "
              f"{r['events'] / r['host']:>9,.0f} {simpy_rate:>9,.0f} "
              f"{rate / simpy_rate:>9.2f} {r['peak_kib'] / 1024:>12,.1f}", flush=True)
    if "ring" in last_host and limit > ns.ring_max_ranks:
        n, host = last_host["ring"]
        big = max(px * py for px, py in SCALES if px * py <= limit)
        print(f"    ring {big:>9,}  skipped (--ring-max-ranks): about "
              f"{host * big / n / 60:,.1f} min projected from {n:,} ranks at the same "
              f"rate", flush=True)
    print()
    print(f"{'ranks':>9} {'KiB per idle rank':>18} {'KiB per bare greenlet':>22}", flush=True)
    idle: dict[int, float] = {}
    for px, py in SCALES:
        if px * py <= limit:
            r = run("idle", px, py, 0)
            idle[r["ranks"]] = r["per_rank_kib"]
            bare = run("greenlet", px, py, 0)["per_rank_kib"]
            print(f"{r['ranks']:>9,} {r['per_rank_kib']:>18.2f} {bare:>22.2f}", flush=True)
    print("\ntargets: 1,048,576 ranks >= 0.66 x the 4,096 rate; <= 7.1 KiB per idle rank")
    for (wl, n, iters), (rate, _) in rates.items():
        if n == BIG:
            print(f"  {wl} 1,048,576 / 4,096 ranks ({iters} iterations): "
                  f"{rate / base[(wl, iters)]:.2f}")
    print(f"  largest KiB per idle rank: {max(idle.values()):.2f}")

if __name__ == "__main__":
    main()
