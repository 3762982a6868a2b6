"""Programs run under ``mpiexec -n K`` by ``tests/test_distributed.py``.

``python tests/distributed_cases.py OUT.json [CASE ...]`` runs every case (or
the named ones) with ``bsim.simulate(..., hosts=MPI.COMM_WORLD)`` and host
process 0 writes ``{case: result}`` to OUT.json, each result being the JSON of
the :class:`bsim.Result` without its ``host`` section, plus the ranks' return
values.  K = 1 is the single-process reference; the test compares K = 2 and
K = 4 with it for equality.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
from mpi4py import MPI as REAL

import bsim
from bsim import MPI

ROOT = Path(__file__).resolve().parents[1]
NET = "hockney:latency=1e-6,bandwidth=1e9"
TORUS = "torus:dims=4x4,cores=2"


def _stagger(rank: int) -> None:
    """Uneven compute so that arrival orders and wildcard choices are not trivial."""
    bsim.add_time(1e-6 * ((rank * 7) % 5) + 3e-7 * (rank % 3))


# -- point-to-point -----------------------------------------------------------------
def pingpong(sizes: tuple[int, ...] = (8, 4096, 200_000)) -> list[float]:
    """Ranks 0<->n-1 and 1<->2 ping-pong (across host processes for K >= 2)."""
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    peer = {0: n - 1, n - 1: 0, 1: 2, 2: 1}.get(r)
    times = []
    for s in sizes:
        buf = bsim.Buffer(s)
        for _ in range(3):
            if peer is None:
                break
            if r < peer:
                comm.Send(buf, dest=peer, tag=s % 97)
                comm.Recv(buf, source=peer, tag=s % 97)
            else:
                comm.Recv(buf, source=peer, tag=s % 97)
                comm.Send(buf, dest=peer, tag=s % 97)
        times.append(MPI.Wtime())
    return times


def ring(size: int = 1000, rounds: int = 4) -> float:
    """Nonblocking ring in both directions, with Ssend and Sendrecv rounds."""
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    right, left = (r + 1) % n, (r - 1) % n
    for i in range(rounds):
        _stagger(r + i)
        reqs = [comm.Irecv(bsim.Buffer(size), source=left, tag=1),
                comm.Irecv(bsim.Buffer(size), source=right, tag=2),
                comm.Isend(bsim.Buffer(size), dest=right, tag=1),
                comm.Isend(bsim.Buffer(size), dest=left, tag=2)]
        MPI.Request.Waitall(reqs)
        comm.Sendrecv(bsim.Buffer(size), dest=right, sendtag=3, recvbuf=bsim.Buffer(size),
                      source=left, recvtag=3)
        if r % 2 == 0:
            comm.Ssend(bsim.Buffer(size), dest=right, tag=4)
            comm.Recv(bsim.Buffer(size), source=left, tag=4)
        else:
            comm.Recv(bsim.Buffer(size), source=left, tag=4)
            comm.Ssend(bsim.Buffer(size), dest=right, tag=4)
    return MPI.Wtime()


def wildcards() -> Any:
    """ANY_SOURCE/ANY_TAG receives, probes, Test loops, Waitany/Testany, Mprobe."""
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    out: list[Any] = []
    for rnd in range(3):
        if r == 0:
            st = MPI.Status()
            order = []
            for _ in range(n - 1):
                obj = comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
                order.append((obj, st.Get_source(), st.Get_tag()))
            out.append(order)
        else:
            bsim.add_time(1e-6 * (((r + rnd) * 5) % 7))
            comm.send((rnd, r), dest=0, tag=r % 3)
    comm.Barrier()   # the ANY_TAG receives above must not take the tag-9 messages
    # probes and polling
    if r == 0:
        polls = 0
        while not comm.Iprobe(source=MPI.ANY_SOURCE, tag=9):
            polls += 1
        st = MPI.Status()
        comm.Probe(source=MPI.ANY_SOURCE, tag=9, status=st)
        out.append((polls, st.Get_source(), st.Get_count()))
        for _ in range(n - 1):
            msg = comm.Mprobe(source=MPI.ANY_SOURCE, tag=9, status=st)
            buf = np.zeros(st.Get_count() // 8)
            msg.Recv(buf)
            out.append((st.Get_source(), float(buf[0])))
    else:
        bsim.add_time(2e-6 * r)
        comm.Send(np.full(r, float(r)), dest=0, tag=9)
    # Waitany / Testany / Test on receives from every other rank
    reqs = [comm.irecv(source=s, tag=11) for s in range(n) if s != r]
    sends = [comm.isend(r * 10 + d, dest=d, tag=11) for d in range(n) if d != r]
    _stagger(r)
    got = []
    while reqs:
        flag = False
        if len(reqs) % 2:
            i, flag, obj = MPI.Request.testany(reqs)
        if not flag:
            i, obj = MPI.Request.waitany(reqs)
        got.append(obj)
        reqs.pop(i)
    MPI.Request.Waitall(sends)
    out.append(got)
    req = comm.irecv(source=(r - 1) % n, tag=12)
    comm.send(r, dest=(r + 1) % n, tag=12)
    tests = 0
    while True:
        flag, obj = req.test()
        if flag:
            break
        tests += 1
    out.append((tests, obj, MPI.Wtime()))
    return out


# -- collectives ----------------------------------------------------------------------
def collectives() -> Any:
    """Every collective, lowercase and uppercase, blocking and nonblocking, on WORLD,
    on a Split and on a Dup."""
    world = MPI.COMM_WORLD
    r = world.rank
    half = world.Split(color=r % 2, key=-r)
    dup = world.Dup()
    out: list[Any] = []
    for comm in (world, half, dup):
        me, n = comm.rank, comm.size
        _stagger(r)
        comm.Barrier()
        out.append(comm.bcast({"x": me} if me == 0 else None, root=0))
        out.append(comm.reduce(me + 1, op=MPI.SUM, root=n - 1))
        out.append(comm.allreduce(me * 2, op=MPI.MAX))
        out.append(comm.gather(me, root=0))
        out.append(comm.scatter([i * i for i in range(n)] if me == 1 % n else None, root=1 % n))
        out.append(comm.allgather(me))
        out.append(comm.alltoall([me * 100 + j for j in range(n)]))
        out.append(comm.scan(me, op=MPI.SUM))
        out.append(comm.exscan(me + 1, op=MPI.PROD))
        _stagger(r + 1)
        a = np.arange(4, dtype="d") + me
        b = np.zeros(4)
        comm.Bcast(a if me == 0 else b, root=0)
        comm.Allreduce(a, b, op=MPI.SUM)
        out.append(b.tolist())
        c = np.zeros(4) if me == 0 else None
        comm.Reduce(a, c, op=MPI.MIN, root=0)
        out.append(None if c is None else c.tolist())
        g = np.zeros(4 * n)
        comm.Allgather(a, g)
        out.append(g.tolist())
        comm.Gather(a, g if me == 0 else None, root=0)
        s = np.zeros(4)
        comm.Scatter(g if me == 0 else None, s, root=0)
        out.append(s.tolist())
        t = np.zeros(4 * n)
        comm.Alltoall(np.arange(4 * n, dtype="d") * (me + 1), t)
        out.append(t.tolist())
        counts = [1 + (i % 3) for i in range(n)]
        v = np.zeros(sum(counts))
        comm.Allgatherv(np.full(counts[me], float(me)), [v, counts])
        out.append(v.tolist())
        rs = np.zeros(2)
        comm.Reduce_scatter_block(np.arange(2 * n, dtype="d"), rs, op=MPI.SUM)
        out.append(rs.tolist())
        sc = np.zeros(4)
        comm.Scan(a, sc, op=MPI.SUM)
        out.append(sc.tolist())
        # nonblocking, completed by Test loops and Waitall
        reqs = [comm.Ibarrier(), comm.Iallreduce(a, b, op=MPI.SUM),
                comm.Ibcast(s, root=n - 1)]
        polls = 0
        while not MPI.Request.Testall(reqs):
            polls += 1
        out.append((polls, b.tolist(), MPI.Wtime()))
        req = comm.Iallgather(a, g)
        _stagger(r + 2)
        req.Wait()
        out.append(g.tolist())
    return out, MPI.Wtime()


# -- the registered skeletons and the test programs ------------------------------------
def _skeleton(name: str, params: dict[str, Any], machine: str | None,
              network: str | None = None, protocol: str = "bsim",
              collectives: Any = None, partition: str = "block") -> dict[str, Any]:
    from bsim.cli.targets import load_target
    from bsim.machines import collective_spec, network_spec
    target = load_target(name, params, [], machine)
    net = network or (network_spec(machine) if machine else NET)
    coll = collectives or (collective_spec(machine) if machine else None)
    res = bsim.simulate(target.main, target.ranks, network=target.network_for(net),
                        protocol=protocol, kwargs=target.params, name=target.name,
                        params=target.params, collectives=coll, hosts=_hosts(),
                        partition=partition)
    return _result(res)


def _program(path: str, ranks: int, network: str = NET, protocol: str = "bsim"
             ) -> dict[str, Any]:
    from bsim.cli.targets import load_target
    target = load_target(str(ROOT / "tests" / "programs" / path), {}, [], None)
    res = bsim.simulate(target.main, ranks, network=network, protocol=protocol,
                        name=target.name, hosts=_hosts())
    return _result(res)


def _hosts() -> Any:
    return REAL.COMM_WORLD if REAL.COMM_WORLD.Get_size() > 1 else None


def _result(res: bsim.Result) -> dict[str, Any]:
    d = res.to_dict()
    d.pop("host")
    d["returns"] = repr(_scrub(res.returns))
    return d


def pipeline(blocks: int = 6, size: int = 800) -> float:
    """A 1-D wavefront through every rank and back, ``blocks`` deep (a pipeline that
    crosses the host processes at every block boundary of a cyclic partition), with
    uneven stage times and a wildcard receive on the way back."""
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    buf = bsim.Buffer(size)
    for _ in range(blocks):   # downstream: 0 -> n-1
        if r > 0:
            comm.Recv(buf, source=r - 1, tag=1)
        bsim.add_time(2e-6 + 1e-7 * ((r * 5) % 3))
        if r < n - 1:
            comm.Send(buf, dest=r + 1, tag=1)
    for _ in range(blocks):   # upstream: n-1 -> 0, any source
        if r < n - 1:
            comm.Recv(buf, source=MPI.ANY_SOURCE, tag=2)
        bsim.add_time(1e-6 * (1 + r % 2))
        if r > 0:
            comm.Send(buf, dest=r - 1, tag=2)
    comm.Barrier()
    return MPI.Wtime()


def unreceived() -> None:
    """A message nobody receives, delivered after max_sim_time: the ranks are done and
    the run ends at the limit, where one process stops (no limit error)."""
    comm = MPI.COMM_WORLD
    if comm.rank == 0:
        comm.Send(bsim.Buffer(8), dest=comm.size - 1)


def _scrub(value: Any) -> Any:
    """Return values without host measurements (HPL reports its host seconds)."""
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k != "host_seconds"}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub(v) for v in value)
    return value


def _sim(main: Any, ranks: int, network: str = NET, protocol: str = "bsim",
         **kw: Any) -> dict[str, Any]:
    return _result(bsim.simulate(main, ranks, network=network, protocol=protocol,
                                 hosts=_hosts(), **kw))


CASES = {
    "pingpong_bsim": lambda: _sim(pingpong, 4),
    "pingpong_loggp": lambda: _sim(pingpong, 4, "loggp", "loggp"),
    "ring_bsim": lambda: _sim(ring, 12),
    "ring_loggp_rendezvous": lambda: _sim(lambda: ring(100_000), 12, TORUS,
                                          "loggp:eager_limit=4096"),
    "ring_torus_node_partition": lambda: _sim(ring, 12, TORUS, partition="node"),
    "wildcards_bsim": lambda: _sim(wildcards, 8),
    "wildcards_loggp": lambda: _sim(wildcards, 8, "loggp:L=2e-6,o=1e-6,g=1e-6,G=1e-9",
                                    "loggp"),
    "collectives_analytic": lambda: _sim(collectives, 8),
    "collectives_torus_loggp": lambda: _sim(collectives, 8, TORUS, "loggp"),
    "collectives_algorithmic": lambda: _sim(collectives, 8, collectives="algorithmic"),
    "sweep3d": lambda: _skeleton("sweep3d", {"px": 4, "py": 4, "nx": 32, "ny": 32, "nz": 40,
                                             "octants": 2}, "es40"),
    "sweep3d_cyclic": lambda: _skeleton("sweep3d", {"px": 4, "py": 6, "nx": 16, "ny": 24,
                                                    "nz": 20, "octants": 8}, "es40",
                                        partition="cyclic:block=3"),
    "pipeline_cyclic": lambda: _sim(pipeline, 12, partition="cyclic:block=2"),
    "unreceived_past_limit": lambda: _sim(unreceived, 4, max_sim_time=5e-7),
    "pipeline_loggp_cyclic": lambda: _sim(pipeline, 12, "loggp", "loggp",
                                          partition="cyclic"),
    "milc_cg": lambda: _skeleton("milc_cg", {"nx": 8, "ny": 8, "nz": 8, "nt": 8,
                                             "nprocs": 16, "niters": 5}, "bgp"),
    "milc_rmd": lambda: _skeleton("milc_rmd", {"nx": 8, "ny": 8, "nz": 8, "nt": 8,
                                               "nprocs": 16}, "bgp"),
    "halo2d_loggp": lambda: _skeleton("halo2d", {"px": 4, "py": 4, "nx": 256, "ny": 256,
                                                 "iterations": 3, "check_every": 1},
                                      None, TORUS, "loggp"),
    "hpl": lambda: _skeleton("hpl", {"n": 1024, "nb": 64, "p": 2, "q": 4, "verbose": False},
                             None, TORUS),
    "phase": lambda: _skeleton("phase", {}, None, TORUS),
    "program_cpi": lambda: _program("cpi.py", 8),
    "program_ring": lambda: _program("ring.py", 8, "loggp", "loggp"),
    "program_cart_halo": lambda: _program("cart_halo.py", 8),
    "program_matvec": lambda: _program("matvec.py", 4),
    "program_pingpong": lambda: _program("pingpong.py", 4),
}


def main(argv: list[str]) -> int:
    out_path, names = argv[0], argv[1:] or list(CASES)
    results = {}
    for name in names:
        results[name] = CASES[name]()
    if REAL.COMM_WORLD.Get_rank() == 0:
        tmp = out_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(results, f, sort_keys=True)
        os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
