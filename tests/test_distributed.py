"""Distributed runs: K host processes give the K = 1 result exactly (docs/distributed.md).

The equality tests run ``tests/distributed_cases.py`` under ``mpiexec -n K``
for K = 1, 2, 4 (oversubscribed on a 2-core machine) and compare every
case's result JSON (all but the ``host`` section) and the ranks' return
values.  The failure tests check that an exception or a deadlock on one host
process ends every process with the failing virtual rank's report, and that
what cannot be split is refused by name.  The one-process tests check the
visibility rule that makes the equality possible, with hand-derived times.

Without mpi4py/mpiexec the MPI tests skip, unless ``BSIM_REQUIRE_MPI=1``
(set by ``.ci/run``), where they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import MPIEXEC, ROOT

import bsim
from bsim import MPI
from bsim.engine.distributed import partition, window_ends
from bsim.errors import DistributedError, LookaheadError
from bsim.simulate import simulate

NET = "hockney:latency=1e-6,bandwidth=1e9"
CASES = ROOT / "tests" / "distributed_cases.py"


def _mpi_available() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return MPIEXEC is not None


if not _mpi_available() and os.environ.get("BSIM_REQUIRE_MPI") == "1":
    raise RuntimeError("BSIM_REQUIRE_MPI=1 but mpi4py or mpiexec is missing "
                       "(pip install -e '.[test]' installs mpi4py and the mpich wheel)")

needs_mpi = pytest.mark.skipif(not _mpi_available(),
                               reason="needs mpi4py and mpiexec (pip install 'bsim[test]')")


def _mpiexec(nprocs: int, args: list[str], timeout: float = 600
             ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([str(MPIEXEC), "-n", str(nprocs), sys.executable, *args],
                          env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _run_cases(nprocs: int, out: Path) -> dict[str, Any]:
    proc = _mpiexec(nprocs, [str(CASES), str(out)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case run by one host process."""
    return _run_cases(1, tmp_path_factory.mktemp("k1") / "k1.json")


# -- K host processes == one -----------------------------------------------------------
@needs_mpi
@pytest.mark.parametrize("hosts", [2, 4])
def test_k_host_processes_give_the_one_process_result(hosts: int, reference: dict[str, Any],
                                                      tmp_path: Path) -> None:
    """Ping-pong, ring, wildcards/probes/tests, every collective (three sources), and the
    skeletons and test programs: the same JSON, bit for bit, for K = 2 and K = 4."""
    got = _run_cases(hosts, tmp_path / f"k{hosts}.json")
    assert sorted(got) == sorted(reference)
    assert len(reference) >= 21
    for name, ref in reference.items():
        assert got[name] == ref, f"case {name}: K={hosts} differs from K=1"


@needs_mpi
def test_reference_cases_are_not_trivial(reference: dict[str, Any]) -> None:
    """The cases exchange messages across ranks and their times are not all equal."""
    for name in ("pingpong_bsim", "ring_loggp_rendezvous", "wildcards_bsim",
                 "collectives_algorithmic", "sweep3d", "milc_cg"):
        case = reference[name]
        assert case["totals"]["messages"] > 0, name
        assert case["totals"]["comm"] > 0 and case["elapsed"] > 0, name
    for name in ("pingpong_bsim", "ring_bsim", "wildcards_bsim", "collectives_analytic",
                 "collectives_algorithmic"):
        assert len(set(reference[name]["per_rank"]["finish"])) > 1, name
    assert reference["collectives_analytic"]["totals"]["wait"] > 0


@needs_mpi
def test_cli_under_mpiexec_prints_and_writes_the_one_process_result(tmp_path: Path) -> None:
    """``mpiexec -n 2 python -m bsim run`` = ``bsim run``: same JSON; host 0 reports windows."""
    args = ["-m", "bsim", "run", "milc_cg", "--machine", "bgp", "--param", "nprocs=16",
            "--param", "niters=4", "--protocol", "bsim"]
    one = tmp_path / "one.json"
    two = tmp_path / "two.json"
    p1 = subprocess.run([sys.executable, *args, "--json", str(one)], capture_output=True,
                        text=True, timeout=300, cwd=ROOT)
    assert p1.returncode == 0, p1.stderr
    p2 = _mpiexec(2, [*args, "--json", str(two)])
    assert p2.returncode == 0, p2.stderr
    a, b = json.loads(one.read_text()), json.loads(two.read_text())
    dist = b["host"].pop("distributed")
    a.pop("host")
    b.pop("host")
    assert a == b
    assert dist["processes"] == 2 and dist["partition"] == "block"
    assert dist["windows"] > 0 and dist["shipped"] > 0
    assert p2.stdout.count("bsim prediction") == 1       # printed by host process 0 only
    assert "host processes 2 (block)" in p2.stdout


@needs_mpi
def test_a_pipeline_skeleton_chooses_the_cyclic_partition(tmp_path: Path) -> None:
    """sweep3d declares ``partition="cyclic"``: ``mpiexec -n 2 bsim run sweep3d`` deals its
    ranks in blocks unless ``--partition`` says otherwise; the prediction is the same."""
    args = ["-m", "bsim", "run", "sweep3d", "--param", "px=4", "--param", "py=4",
            "--param", "iterations=1", "--protocol", "bsim", "--quiet"]
    outs = {}
    for extra in ([], ["--partition", "block"]):
        out = tmp_path / f"r{len(extra)}.json"
        proc = _mpiexec(2, [*args, *extra, "--json", str(out)])
        assert proc.returncode == 0, proc.stderr
        outs[tuple(extra)] = json.loads(out.read_text())
    chosen = [r["host"].pop("distributed")["partition"] for r in outs.values()]
    assert chosen == ["cyclic", "block"]
    for r in outs.values():
        r.pop("host")
    assert outs[()] == outs[("--partition", "block")]


# -- failures end every host process -----------------------------------------------------
_FAILING = """
import sys
from mpi4py import MPI as REAL
import bsim
from bsim import MPI

def main():
    comm = MPI.COMM_WORLD
    comm.Barrier()
    if comm.rank == 6:
        bsim.add_time(1e-6)
        1 / 0
    if comm.rank == 1 and {deadlock}:
        comm.recv(source=7, tag=99)     # never sent
    comm.Barrier()

try:
    bsim.simulate(main, 8, network="{net}", hosts=REAL.COMM_WORLD, protocol="bsim")
except bsim.BsimError as exc:
    print(f"host {{REAL.COMM_WORLD.rank}}: {{type(exc).__name__}}: {{exc}}")
    sys.exit(3)
"""


@needs_mpi
def test_an_exception_on_one_host_aborts_all_with_the_rank_report() -> None:
    """Rank 6 (host 1 of 2) divides by zero: both hosts raise RankError naming rank 6."""
    proc = _mpiexec(2, ["-c", _FAILING.format(deadlock=False, net=NET)], timeout=120)
    assert proc.returncode != 0
    for host in (0, 1):   # (the two processes' lines may interleave in the pipe)
        assert (f"host {host}: RankError: rank 6 raised ZeroDivisionError: division by "
                f"zero (at <string>:12)") in proc.stdout, proc.stdout + proc.stderr


_TWO_FAILURES = """
import sys
from mpi4py import MPI as REAL
import bsim
from bsim import MPI

def main():
    comm = MPI.COMM_WORLD
    if comm.rank == 0:
        bsim.add_time(1.1e-6)
        comm.Iprobe()
        bsim.add_time(1.3e-6)
    else:
        bsim.add_time(2.2e-6)
    comm.Iprobe()
    raise ValueError(f"rank {{comm.rank}} failed")

try:
    bsim.simulate(main, 2, network="{net}", protocol="bsim:poll_time=1e-7",
                  hosts=REAL.COMM_WORLD)
except bsim.BsimError as exc:
    print(f"host {{REAL.COMM_WORLD.rank}}: {{type(exc).__name__}}: {{exc}}")
    sys.exit(3)
"""


_MATCH_ABOVE_EAGER = """
import sys
from mpi4py import MPI as REAL
import bsim
from bsim import MPI

def main():
    comm = MPI.COMM_WORLD
    if comm.rank == 0:
        comm.Send(bsim.Buffer(100000), dest=3)
    elif comm.rank == 3:
        comm.Recv(bsim.Buffer(100000), source=0)

try:
    bsim.simulate(main, 4, network="{net}", protocol="loggp:data=match", hosts=REAL.COMM_WORLD)
except bsim.BsimError as exc:
    print(f"host {{REAL.COMM_WORLD.rank}}: {{type(exc).__name__}}: {{exc}}")
    sys.exit(3)
"""


@needs_mpi
def test_data_match_above_the_eager_limit_is_refused_naming_the_send() -> None:
    """``loggp:data=match``: a send above the eager limit completes when its data arrives,
    which one host process computes; over two, rank 0's 100,000-byte ``Send`` stops every
    host with the call, the size, the limit and the program's line."""
    proc = _mpiexec(2, ["-c", _MATCH_ABOVE_EAGER.format(net=NET)], timeout=120)
    assert proc.returncode != 0
    for host in (0, 1):
        assert (f"host {host}: RankError: rank 0 raised NotImplementedError: loggp data=match: "
                f"Send of 100000 bytes (above eager_limit=65536) completes when its data "
                f"arrives, which needs one host process (run without mpiexec, or raise "
                f"eager_limit) (at <string>:10)") in proc.stdout, proc.stdout + proc.stderr


_PAST_THE_LIMIT = """
import sys
from mpi4py import MPI as REAL
import bsim
from bsim import MPI

def main():
    MPI.COMM_WORLD.Barrier()
    if MPI.COMM_WORLD.rank == 3:
        bsim.add_time(10.0)

try:
    bsim.simulate(main, 4, network="{net}", max_sim_time=1.0, hosts=REAL.COMM_WORLD,
                  protocol="bsim")
except bsim.BsimError as exc:
    print(f"host {{REAL.COMM_WORLD.rank}}: {{type(exc).__name__}}: {{exc}}")
    sys.exit(3)
"""


@needs_mpi
def test_a_rank_past_max_sim_time_stops_every_host() -> None:
    """Rank 3 (host 1) ends at t = 10 s under a 1 s limit: both hosts raise the limit's
    error, as one process does (tests/test_livelock.py)."""
    proc = _mpiexec(2, ["-c", _PAST_THE_LIMIT.format(net=NET)], timeout=120)
    assert proc.returncode != 0
    for host in (0, 1):
        assert (f"host {host}: SimulationLimitError: simulated time passed the limit "
                f"max_sim_time=1.0 s: rank 3 finished at t=10.0") in proc.stdout, \
            proc.stdout + proc.stderr


@needs_mpi
def test_the_earliest_failure_wins_though_the_hosts_windows_end_apart() -> None:
    """After the first window (1 us) rank 0 (host 0) resumes at N_0 = 1.1 us and rank 1
    (host 1) at N_1 = 2.2 us, so host 0's window ends at min(2.2 + 1, 1.1 + 2) = 3.1 us
    and host 1's at 1.1 + 1 = 2.1 us: rank 0 fails at 1.1 + 0.1 + 1.3 = 2.5 us while
    rank 1's failure at 2.2 us is still ahead of host 1.  Host 1 runs it before the
    report, and both hosts raise rank 1's error, as one process does."""
    code = _TWO_FAILURES.format(net=NET)
    proc = _mpiexec(2, ["-c", code], timeout=120)
    assert proc.returncode != 0
    for host in (0, 1):
        assert (f"host {host}: RankError: rank 1 raised ValueError: rank 1 failed"
                in proc.stdout), proc.stdout + proc.stderr
    one = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert "host 0: RankError: rank 1 raised ValueError: rank 1 failed" in one.stdout


@needs_mpi
def test_a_deadlock_across_hosts_is_reported_with_every_blocked_rank() -> None:
    """Rank 1 (host 0) waits for a message rank 7 (host 1) never sends; the others wait in
    the second Barrier.  Both hosts report all 8 ranks, at the time the last one blocked,
    as one process does: the first Barrier (dissemination, 3 rounds of 1 us on 8 ranks)
    ends at 3 us, and rank 6 blocks after 1 us more of add_time, at 4 us (the report said
    1 us, the last event, before)."""
    code = _FAILING.format(deadlock=True, net=NET).replace("1 / 0", "pass")
    proc = _mpiexec(2, ["-c", code], timeout=120)
    assert proc.returncode != 0
    out = proc.stdout
    for host in (0, 1):
        assert f"host {host}: DeadlockError: deadlock at t=4e-06: 8 of 8 ranks blocked" in out
    assert out.count("rank 6: barrier (collective) at <string>:15 (blocked since t=4e-06)") == 2
    assert out.count("rank 1: recv(source=world 7, tag=99)") == 2
    assert out.count("rank 7: barrier (collective)") == 2, out


@needs_mpi
def test_a_collective_faster_than_the_lookahead_is_refused_when_it_matters(tmp_path) -> None:
    """A barrier extrapolated from a table to 0.5 us on 2 ranks (measured 1.5 us on 4,
    3.5 us on 8: 0.5 us a rank; T < lookahead 1 us) lets a rank send inside the current
    window: refused when it happens.  (The cheapest measured point, 1.5 us, passes the
    check before the run.)"""
    table = tmp_path / "t.csv"
    table.write_text("op,nprocs,nbytes,seconds\nbarrier,4,0,1.5e-6\nbarrier,8,0,3.5e-6\n")
    code = """
import sys
from mpi4py import MPI as REAL
import bsim
from bsim import MPI

def main():
    comm = MPI.COMM_WORLD
    pair = comm.Split(comm.rank % 2, comm.rank)   # ranks 0, 2 and 1, 3: across the hosts
    pair.Barrier()
    comm.send(1, dest=(comm.rank + 2) % 4)
    comm.recv(source=(comm.rank - 2) % 4)

try:
    bsim.simulate(main, 4, network="hockney:latency=1e-6,bandwidth=1e9",
                  collectives={"default": "analytic", "barrier": "table:path=TABLE"},
                  hosts=REAL.COMM_WORLD, protocol="bsim")
except bsim.BsimError as exc:
    print(f"host {REAL.COMM_WORLD.rank}: {type(exc).__name__}: {exc}")
    sys.exit(3)
""".replace("TABLE", str(table))
    proc = _mpiexec(2, ["-c", code], timeout=120)
    assert proc.returncode != 0
    assert proc.stdout.count("LookaheadError") == 2, proc.stdout + proc.stderr
    assert "falls inside the current window" in proc.stdout


class _FakeHosts:
    """Stands for an mpi4py communicator of 2 processes (refusals happen before any use)."""

    def Get_size(self) -> int:
        return 2

    def Get_rank(self) -> int:
        return 0

    # the meeting before the run (bsim/engine/host_checks.py): host 1 answers what
    # host 0 sent (both started alike), through the window exchange's calls
    def isend(self, blob: bytes, dest: int, tag: int) -> Any:
        self.sent = blob
        return _Done()

    def improbe(self, source: int, tag: int) -> Any:
        return _Received(self.reply(self.sent))

    def reply(self, blob: bytes) -> bytes:
        return blob


class _Done:
    def Test(self) -> bool:
        return True


class _Received:
    def __init__(self, blob: bytes) -> None:
        self.blob = blob

    def recv(self) -> bytes:
        return self.blob


def _noop() -> None:
    pass


def test_a_collective_model_cheaper_than_the_lookahead_is_refused_before_the_run() -> None:
    """A collective priced below the lookahead (the least message time) would complete
    inside a window another host has already run: refused before the run, naming the
    model, the op, its time on 2 ranks (``c + d log2 2``) and the lookahead.  The power5
    preset prices allreduce at ``0 + 3.65 us`` against 2o + L = 33.79 us of its LogGP
    table (the MILC paper's): it stopped mid-run with an event 'inside the current
    window'."""
    with pytest.raises(LookaheadError, match=r"collective model 'clog:c=1e-09,d=0.0' prices "
                                             r"every op at 1e-09 s on 2 ranks or more, "
                                             r"below the lookahead 1e-06 s"):
        simulate(_noop, 4, network="hockney:latency=1e-6,bandwidth=1e9",
                 collectives="clog:c=1e-9,d=0", hosts=_FakeHosts(), protocol="bsim")
    with pytest.raises(LookaheadError, match=r"prices allreduce at 3.65e-06 s on 2 ranks or "
                                             r"more, below the lookahead 3.37948e-05 s"):
        simulate(_noop, 4, machine="power5", hosts=_FakeHosts(), protocol="bsim")
    simulate(_noop, 4, network="hockney:latency=1e-6,bandwidth=1e9",   # 1 us: not below
             collectives="clog:c=5e-7,d=5e-7", hosts=None, protocol="bsim")


class _OtherRun(_FakeHosts):
    """Host process 1 of 2 was started with another rank count (``mpiexec -n 1 bsim run
    p.py -n 8 : -n 1 bsim run p.py -n 9``)."""

    def reply(self, blob: bytes) -> bytes:
        import pickle
        kind, settings = pickle.loads(blob)
        return pickle.dumps((kind, {**settings, "ranks": "9"}))


def test_host_processes_started_with_different_runs_are_refused() -> None:
    """An MPMD launch whose host processes run different rank counts, protocols or
    programs: one line naming the first difference, on every host (it gave an IndexError
    traceback, a result mixed from two protocols, or a deadlock: an outside review)."""
    with pytest.raises(DistributedError, match=r"host processes 0 and 1 were started with "
                                               r"different runs: ranks '4' against '9'"):
        simulate(_noop, 4, hosts=_OtherRun(), protocol="bsim")


def test_zero_lookahead_is_refused_naming_the_model() -> None:
    with pytest.raises(LookaheadError, match=r"network 'zero' under protocol 'bsim' has "
                                             r"zero lookahead"):
        simulate(_noop, 4, network="zero", hosts=_FakeHosts(), protocol="bsim")
    with pytest.raises(LookaheadError, match="loggp"):
        simulate(_noop, 4, network="loggp:L=0,o=1e-6,g=1e-6,G=1e-9", protocol="loggp",
                 hosts=_FakeHosts())


def test_models_with_shared_state_are_refused_by_name() -> None:
    from bsim.engine.network_noise import NoisyNetwork
    from netmodels import build_network
    noisy = NoisyNetwork(build_network(NET), mean=1e-7)
    with pytest.raises(DistributedError, match="network model 'noisy' cannot be split"):
        simulate(_noop, 4, network=noisy, hosts=_FakeHosts(), protocol="bsim")
    with pytest.raises(DistributedError, match="contention 'fluid'"):
        simulate(_noop, 4, network="torus:dims=2x2", contention="fluid", hosts=_FakeHosts(),
                 protocol="bsim")
    with pytest.raises(DistributedError, match="tracing"):
        from bsim.outputs.trace import ChromeTracer
        simulate(_noop, 4, network=NET, tracer=ChromeTracer(), hosts=_FakeHosts(), protocol="bsim")


# -- partitions --------------------------------------------------------------------------
def test_block_partition_gives_contiguous_blocks() -> None:
    assert partition(10, 3) == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert partition(4, 4) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="at most one host process per virtual rank"):
        partition(2, 4)


def test_cyclic_partition_deals_blocks_in_turn() -> None:
    """Blocks of B ranks to hosts 0, 1, ..., K-1, 0, ...; by default 16 blocks a host."""
    assert partition(10, 3, "cyclic:block=2") == [0, 0, 1, 1, 2, 2, 0, 0, 1, 1]
    assert partition(5, 2, "cyclic:block=1") == [0, 1, 0, 1, 0]
    assert partition(4096, 2, "cyclic") == [(r // 128) % 2 for r in range(4096)]
    assert partition(6, 4, "cyclic") == [0, 1, 2, 3, 0, 1]   # blocks of one rank
    with pytest.raises(ValueError, match="cyclic:block=B"):
        partition(8, 2, "cyclic:block=0")
    with pytest.raises(ValueError, match="without ranks"):
        partition(8, 2, "cyclic:block=8")
    with pytest.raises(ValueError, match="unknown partition"):
        partition(8, 2, "stripes")


def test_window_ends_follow_the_earliest_events_of_the_other_hosts() -> None:
    """E_h = min(N_g + δ over g != h, N_h + 2δ), capped: the worked example of
    docs/distributed.md (δ = 1) and three hosts by hand."""
    inf = float("inf")
    assert window_ends([0.0, 0.0], 1.0, inf) == [1.0, 1.0]
    assert window_ends([inf, 3.0], 1.0, inf) == [4.0, 5.0]   # host 1 runs 2δ alone
    assert window_ends([5.0, 5.0], 1.0, inf) == [6.0, 6.0]
    # host 0: min(2 + 1, 1 + 2) = 3; host 1: min(1 + 1, 5 + 2) = 2; host 2: min(2, 4) = 2
    assert window_ends([1.0, 5.0, 2.0], 1.0, inf) == [3.0, 2.0, 2.0]
    assert window_ends([0.0, 0.0], 1.0, 0.5) == [0.5, 0.5]   # max_sim_time or a failure
    assert window_ends([3.0], 1.0, inf) == [5.0]


def test_node_partition_keeps_a_node_on_one_host() -> None:
    """32 ranks on 16 two-core nodes over 3 hosts: nodes 0-5, 6-10, 11-15 (cut at
    done * 3 // 32); with the round-robin mapping node i holds ranks i and i + 16."""
    from netmodels import build_network
    block = build_network("torus:dims=4x4,cores=2")
    block.prepare(32)
    assert partition(32, 3, "node", block) == [0] * 12 + [1] * 10 + [2] * 10
    rr = build_network("torus:dims=4x4,cores=2,mapping=roundrobin")
    rr.prepare(32)
    half = [0] * 6 + [1] * 5 + [2] * 5
    assert partition(32, 3, "node", rr) == half + half
    with pytest.raises(ValueError, match="needs a network model with nodes"):
        partition(8, 2, "node", build_network(NET))


# -- the visibility rule, in one process -------------------------------------------------
def test_a_collective_completion_is_visible_the_lookahead_after_the_last_arrival() -> None:
    """Iallreduce on 2 ranks, rank 1 arriving at 5 us; lookahead = min_cost = 1 us.

    The completion is known at 5 + 1 = 6 us.  Rank 0 Tests from t = 0 in poll_time = 1 us
    steps: six steps sum to 5.999999999999999e-06 < 6e-6, so Tests at 0..6 us fail (7
    polls) and the 8th, at ~7 us, succeeds.  Rank 1 Tests at 5 us (fails), succeeds at
    6 us (1 poll).  T = one exchange of 8 B = 1 us + 8 ns; avail = max(arrivals) = 5 us is
    past for both, so each finishes at its last Test + T.
    """
    def main() -> int:
        comm = MPI.COMM_WORLD
        if comm.rank == 1:
            bsim.add_time(5e-6)
        req = comm.Iallreduce(bsim.Buffer(8), bsim.Buffer(8))
        polls = 0
        while not req.Test():
            polls += 1
        return polls

    res = simulate(main, 2, network=NET, protocol="bsim")
    T = 1e-6 + 8e-9
    assert res.returns == [7, 1]
    assert res.comm.tolist() == [pytest.approx(T, rel=1e-12)] * 2
    assert res.wait[0] == pytest.approx(7e-6, rel=1e-12)
    assert res.wait[1] == pytest.approx(1e-6, rel=1e-12)
    assert res.finish[0] == pytest.approx(7e-6 + T, rel=1e-12)
    assert res.finish[1] == pytest.approx(6e-6 + T, rel=1e-12)


def test_a_broadcast_root_is_visible_the_lookahead_after_its_arrival() -> None:
    """Ibcast: the root (rank 0) arrives at 3 us, so rank 1 sees it at 4 us; its Tests at
    0, 1, 2, 3 us fail (four 1e-6 steps sum to exactly 4e-6) and it finishes at 4 us + T,
    T = 1 us + 64 ns for 64 bytes."""
    def main() -> int:
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            bsim.add_time(3e-6)
        req = comm.Ibcast(bsim.Buffer(64), root=0)
        polls = 0
        while not req.Test():
            polls += 1
        return polls

    res = simulate(main, 2, network=NET, protocol="bsim")
    T = 1e-6 + 64e-9
    assert res.returns == [0, 4]
    assert res.finish[0] == pytest.approx(3e-6 + T, rel=1e-12)
    assert res.finish[1] == pytest.approx(4e-6 + T, rel=1e-12)
    assert res.wait[1] == pytest.approx(4e-6, rel=1e-12)


def test_blocking_receive_timing_is_unchanged_by_the_lag() -> None:
    """A Recv posted at 0 for a message sent at 2 us still completes at 2 us + cost
    (wait 2 us, comm = cost), although the message becomes visible at 3 us."""
    def main() -> None:
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            bsim.add_time(2e-6)
            comm.Send(bsim.Buffer(1000), dest=1)
        else:
            comm.Recv(bsim.Buffer(1000), source=0)

    res = simulate(main, 2, network=NET, protocol="bsim")
    c = 1e-6 + 1000 / 1e9
    assert res.finish[1] == pytest.approx(2e-6 + c, rel=1e-12)
    assert res.wait[1] == pytest.approx(2e-6, rel=1e-12)
    assert res.comm[1] == pytest.approx(c, rel=1e-12)


@pytest.mark.skipif(MPIEXEC is None, reason="needs mpiexec and mpi4py (pip install 'bsim[mpi]')")
def test_a_host_that_stops_answering_ends_the_run_within_the_timeout(tmp_path: Path) -> None:
    """Host 1 stops (SIGSTOP) mid-run: host 0 names it within BSIM_HOST_TIMEOUT and aborts."""
    import time
    prog = tmp_path / "stall.py"
    prog.write_text("import os, signal\nimport bsim\nfrom mpi4py import MPI\n"
                    "comm = MPI.COMM_WORLD\nfor i in range(50):\n"
                    "    bsim.add_time(1e-3)\n    comm.Barrier()\n"
                    "    if i == 10 and comm.rank == 3:\n"
                    "        os.kill(os.getpid(), signal.SIGSTOP)   # this host stops\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), BSIM_HOST_TIMEOUT="3")
    t0 = time.monotonic()
    proc = subprocess.run([str(MPIEXEC), "-n", "2", sys.executable, "-m", "bsim", "run",
                           str(prog), "-n", "4", "--network",
                           "hockney:latency=1e-6,bandwidth=1e9", "--protocol", "bsim",
                           "--quiet"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    elapsed = time.monotonic() - t0
    assert proc.returncode != 0
    assert ("host process 0: host process(es) 1 did not answer within 3 s"
            in proc.stderr), proc.stderr
    assert elapsed < 60


_STOPS = """
import sys
from mpi4py import MPI as REAL
import bsim
from bsim import MPI

def polls():
    comm = MPI.COMM_WORLD
    if comm.rank == 3:                  # on host 1 of 2; nobody ever sends it tag 9
        while not comm.Iprobe(source=0, tag=9):
            pass

def long():
    for _ in range(1000):
        bsim.add_time(1.0)
        MPI.COMM_WORLD.Barrier()

def poll_and_block():                   # a poller on host 0, blocked receivers on host 1
    comm = MPI.COMM_WORLD
    if comm.rank == 0:
        req = comm.irecv(source=1)
        while not req.Test():
            bsim.add_time(1e-6)
    else:
        comm.recv(source=0)

def mismatch():                         # found on host 0 in its window, on host 1 on insert
    comm = MPI.COMM_WORLD
    if comm.rank == 0:
        comm.Barrier()
    else:
        comm.allreduce(1)

try:
    if sys.argv[1] == "livelock":
        bsim.simulate(polls, 4, network="{net}", hosts=REAL.COMM_WORLD, protocol="bsim")
    elif sys.argv[1] in ("poll_and_block", "mismatch"):
        bsim.simulate(globals()[sys.argv[1]], 4, network="{net}", hosts=REAL.COMM_WORLD,
                      protocol="bsim")
    else:
        bsim.simulate(long, 4, network="{net}", hosts=REAL.COMM_WORLD, max_sim_time=10.0,
                      protocol="bsim")
except bsim.BsimError as exc:
    print(f"host {{REAL.COMM_WORLD.rank}}: {{type(exc).__name__}}: {{exc}}")
    sys.exit(3)
"""


def _one_process_limit_error() -> str:
    """The limit error of ``long`` run in this (one) process."""
    def long() -> None:
        for _ in range(1000):
            bsim.add_time(1.0)
            MPI.COMM_WORLD.Barrier()
    with pytest.raises(bsim.SimulationLimitError) as info:
        simulate(long, 4, network=NET, max_sim_time=10.0, protocol="bsim")
    return str(info.value).split(";")[0]


@needs_mpi
@pytest.mark.parametrize("case", ["livelock", "limit"])
def test_livelocks_and_limits_end_every_host(case: str) -> None:
    """Under mpiexec -n 2 a livelock (a poller on host 1) and max_sim_time end both hosts
    with the same error; the limit is reported as one process reports it."""
    expected = ("LivelockError: livelock at t=" if case == "livelock" else
                "SimulationLimitError: " + _one_process_limit_error())
    proc = _mpiexec(2, ["-c", _STOPS.format(net=NET), case], timeout=120)
    assert proc.returncode != 0
    for host in (0, 1):
        assert f"host {host}: {expected}" in proc.stdout, proc.stdout + proc.stderr


@needs_mpi
@pytest.mark.parametrize("case, expected", [
    ("poll_and_block", "LivelockError: livelock at t="),
    ("mismatch", "CollectiveMismatchError: collective mismatch"),
])
def test_a_host_that_only_waits_or_fails_on_insert_ends_with_the_others(case: str,
                                                                        expected: str) -> None:
    """A poller on host 0 whose partners on host 1 are blocked, with nothing in flight, is
    the livelock one process reports (host 1, with no event at all, never counted as
    quiet: the run went on until killed); a mismatch that host 0 finds in its window and
    host 1 when inserting host 0's arrivals ends both hosts with the same error at once
    (host 1 waited 120 s for an exchange host 0 never joined, then aborted)."""
    start = time.perf_counter()
    proc = _mpiexec(2, ["-c", _STOPS.format(net=NET), case], timeout=60)
    assert proc.returncode != 0
    for host in (0, 1):
        assert f"host {host}: {expected}" in proc.stdout, proc.stdout + proc.stderr
    assert time.perf_counter() - start < 30


_RING_DEADLOCK = """
import sys
import bsim
from bsim import MPI

def main():
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    bsim.add_time(1e-6 * r)
    comm.Recv(bsim.buffer(4, MPI.BYTE), source=(r + 1) % n, tag=1)

def run():
    hosts = None
    if len(sys.argv) > 1:
        from mpi4py import MPI as REAL
        hosts = REAL.COMM_WORLD
    try:
        bsim.simulate(main, 6, hosts=hosts, protocol="bsim")
    except bsim.DeadlockError as exc:
        if hosts is None or hosts.rank == 0:
            print(exc)

run()
"""


@needs_mpi
def test_a_deadlock_across_hosts_says_when_each_rank_blocked() -> None:
    """A ring of receives after add_time(1 us x r): every rank blocks at its own clock, the
    last at 5 us.  Over 2 host processes the error is the one-process error: it said
    't=0.0' (the last event) and dropped every '(blocked since t=...)' (an outside
    review)."""
    one = subprocess.run([sys.executable, "-c", _RING_DEADLOCK], capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120,
                         cwd=ROOT)
    two = _mpiexec(2, ["-c", _RING_DEADLOCK, "hosts"], timeout=120)
    assert one.stdout.startswith("deadlock at t=4.9999999999999996e-06: 6 of 6 ranks "), \
        one.stdout + one.stderr
    assert "rank 5: Recv(source=world 0, tag=1) at " in one.stdout
    assert "(blocked since t=4.9999999999999996e-06)" in one.stdout
    assert two.stdout == one.stdout, two.stdout + two.stderr


_LIVELOCK = """
import bsim
from bsim import MPI

def main():
    comm = MPI.COMM_WORLD
    if comm.rank == comm.size - 1:   # polls for a message nobody sends
        while not comm.Iprobe(source=0, tag=5):
            bsim.add_time(1e-6)

def run():
    from mpi4py import MPI as REAL
    try:
        bsim.simulate(main, 4, hosts=REAL.COMM_WORLD, protocol="bsim")
    except bsim.LivelockError as exc:
        print(f"host {REAL.COMM_WORLD.rank}: {str(exc).splitlines()[0]}")

run()
"""


@needs_mpi
def test_more_host_processes_than_cores_still_end_a_livelock() -> None:
    """Three host processes (more than this 2-core machine's cores) with one rank polling
    forever: the livelock is found after 100,000 polls, about 40,000 windows.  The window
    exchange busy-polled without giving up the core, so a window cost a scheduler slice
    (about 6 ms): some 4 minutes; the waiting hosts now yield."""
    proc = _mpiexec(3, ["-c", _LIVELOCK], timeout=150)
    assert proc.stdout.count("livelock at t=") == 3, proc.stdout + proc.stderr


_EARLY_FAILURE = """
import bsim
from bsim import MPI

def main():
    MPI.COMM_WORLD.Barrier()

def run():
    from mpi4py import MPI as REAL
    hosts = REAL.COMM_WORLD
    net = "hockney:latency=1e-6,bandwidth=1e9" if hosts.rank == 0 else "hockney:latency=-1"
    try:
        bsim.simulate(main, 4, network=net, hosts=hosts, protocol="bsim")
    except Exception as exc:
        print(f"host {hosts.rank}: {type(exc).__name__}: {exc}", flush=True)

run()
"""


@needs_mpi
def test_an_error_on_one_host_before_the_run_reaches_the_others() -> None:
    """Host process 1 cannot build its network (a file or value only it has wrong): it
    raises its own error and host 0 raises one naming host 1's, at once.  Host 0 waited
    for host 1 at the first exchange: 120 s (BSIM_HOST_TIMEOUT) and an abort, or forever
    in an MPI collective (an outside review)."""
    proc = _mpiexec(2, ["-c", _EARLY_FAILURE], timeout=60)
    assert "host 1: NetworkSpecError: hockney: latency must be a finite number >= 0" \
        in proc.stdout, proc.stdout + proc.stderr
    assert ("host 0: DistributedError: host process 1 failed before the run: "
            "NetworkSpecError: hockney: latency must be") in proc.stdout


@needs_mpi
def test_a_target_one_host_process_cannot_load_stops_every_host(tmp_path) -> None:
    """``mpiexec -n 1 bsim run p.py : -n 1 bsim run p.py --machine missing.toml``: host 1
    cannot load its machine file; host 0 reports it in one line at once, and both exit
    with status 2 (host 0 waited 120 s for host 1 at the first window exchange)."""
    (tmp_path / "p.py").write_text("from mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n")
    run = [sys.executable, "-m", "bsim", "run", "p.py", "-n", "8"]
    proc = subprocess.run([str(MPIEXEC), "-n", "1", *run, ":", "-n", "1", *run,
                           "--machine", "missing.toml"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("bsim: error: host process 1 failed before the run: "
                                   "MachineError: machine file 'missing.toml' does not exist")


def test_a_table_s_one_rank_row_does_not_refuse_a_distributed_run(tmp_path) -> None:
    """A table measured at 1, 2 and 8 ranks: the 1-rank allreduce (0.1 us) never crosses
    hosts; its cheapest call on 2 ranks or more, 20 us, is above the 1 us lookahead, so
    the run goes on (it was refused, naming the 1-rank price as the 2-rank one: an outside
    review).  With rows at 1 and 8 ranks only, 2 ranks interpolate to 0.1 + (6 - 0.1) / 7
    = 0.943 us at 8 B: below the lookahead, refused."""
    table = tmp_path / "t.csv"
    table.write_text("op,nprocs,nbytes,seconds\nallreduce,1,8,1e-7\nallreduce,1,8192,2e-7\n"
                     "allreduce,2,8,2e-5\nallreduce,2,8192,4e-5\n"
                     "allreduce,8,8,6e-5\nallreduce,8,8192,9e-5\n")
    net = "hockney:latency=1e-6,bandwidth=1e9"
    from bsim.engine.host_checks import check_distributable
    engine = _engine_for(net, f"table:path={table}")
    check_distributable(engine)   # refuses nothing
    table.write_text("op,nprocs,nbytes,seconds\nallreduce,1,8,1e-7\nallreduce,1,8192,2e-7\n"
                     "allreduce,8,8,6e-6\nallreduce,8,8192,9e-6\n")
    with pytest.raises(LookaheadError, match=r"prices allreduce at 9.42857e-07 s on 2 ranks"):
        check_distributable(_engine_for(net, f"table:path={table}"))


def _engine_for(network: str, collectives: str) -> Any:
    """An engine with *network* and *collectives*, as simulate() builds it (its lookahead
    the protocol's)."""
    from bsim.engine.collective_costs import CollectiveCosts
    from bsim.engine.core import Engine
    from bsim.engine.protocols import build_protocol
    from netmodels import build_network
    net = build_network(network)
    proto = build_protocol("bsim")
    engine = Engine(4, net, proto)
    engine.collective_costs = CollectiveCosts(collectives)
    engine.lookahead = proto.lookahead(net)
    return engine


_OWN_NOISE = """
import bsim
from bsim import MPI

class Still:
    '''A compute-noise model of the user's own, without a spec: its repr holds an address.'''

    def stretch(self, rank, start, seconds):
        return seconds

def main():
    bsim.add_time(1e-6)
    MPI.COMM_WORLD.Barrier()

def run():
    from mpi4py import MPI as REAL
    res = bsim.simulate(main, 4, noise=Still(), hosts=REAL.COMM_WORLD, protocol="bsim")
    print(f"host {REAL.COMM_WORLD.rank}: {res.elapsed!r}", flush=True)

run()
"""


@needs_mpi
def test_a_noise_model_of_the_user_s_own_is_the_same_run_on_every_host() -> None:
    """The settings the host processes compare name such a model by its type, not its
    repr, whose address differs from process to process (a false 'different runs').
    Each host gives 1 us of add_time + a 4-rank dissemination barrier, 2 rounds of the
    default 1 us: 3 us."""
    proc = _mpiexec(2, ["-c", _OWN_NOISE], timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(": 3e-06") == 2, proc.stdout
