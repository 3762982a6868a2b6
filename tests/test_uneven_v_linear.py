"""Linear Gatherv and Scatterv with uneven and empty blocks, by hand.

MPICH's linear algorithms (scatterv_allcomm_linear.c, gatherv_allcomm_linear.c): the root
loops over ranks ``i = 0 .. P-1`` and posts one isend (irecv) for each other rank whose
count is not zero, then waits for all; a non-root receives (sends) its block only if its
count is not zero.  bsim priced and expanded every block as the root's average (a
Scatterv of ``[0, ..., 0, 1 MB]`` on 8 ranks reached rank 7 at ``t(125 kB)`` expanded,
``7 t(125 kB)`` as a formula) and charged empty blocks a message.

Five ranks, root 2, counts ``[300, 0, 500, 1000, 2000]`` bytes: the root moves blocks to or
from ranks 0, 3, 4 in that order (its own 500 bytes are a local copy); rank 1 takes no
part.  Derivations (``t(s) = 1 us + s / 1 GB/s``):

* Scatterv, ``bsim`` protocol, a send charged ``c``: the root's sends leave at 0, ``c``,
  ``2c``; a message is received ``t(s)`` after it leaves: rank 0 at ``t(300)``, rank 3 at
  ``c + t(1000)``, rank 4 at ``2c + t(2000)``, the root at ``3c``.
* Scatterv, ``loggp`` ``L = 1 us, o = 0.2 us, g = 0.5 us, G = 1 ns/B`` (eager): the root
  posts its sends at 0, o, 2o; message ``i`` leaves at ``max(post + o, NIC free)`` and
  holds the NIC ``max(g, (s-1) G)``, arrives ``wire = L + (s-1) G`` later and is received
  ``o`` after that.  Rank 0: leaves 0.2, arrives 0.2 + 1.299, done 1.699 us (NIC free at
  0.7); rank 3: leaves max(0.4, 0.7) = 0.7, done 0.7 + 1.999 + 0.2 = 2.899 us (NIC free
  at 1.699); rank 4: leaves max(0.6, 1.699), done 1.699 + 2.999 + 0.2 = 4.898 us; the root
  3 o = 0.6 us.
* Gatherv, ``bsim``: senders end at ``c``; their messages leave at 0 and the root pays
  them in turn, ``t(300) + t(1000) + t(2000)`` = 6.3 us.  ``loggp``: senders end at
  ``o``; the messages arrive at ``o + wire(s)``: 1.499, 2.199, 3.199 us, and the root
  receives them ``o`` apart in that order: 1.699, 2.399, 3.399 us.
* The formula (``analytic``; the algorithmic twin of the nonblocking calls) is the port
  model with one message ``m(s)`` (``t(s)``, or ``o + wire(s) + o`` under ``loggp``):
  Scatterv member ``j`` pays the root's messages up to its own, ``m(300)``,
  ``m(300) + m(1000)``, ``m(300) + m(1000) + m(2000)``, the root that last sum; Gatherv
  members ``m(own)``, the root ``m(300) + m(1000) + m(2000)``; rank 1 nothing in both.
"""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI

P, ROOT = 5, 2
COUNTS = [300, 0, 500, 1000, 2000]
HOCKNEY = "hockney:latency=1e-6,bandwidth=1e9"
LOGGP = "loggp:L=1e-6,o=2e-7,g=5e-7,G=1e-9"
OVH = 2e-7


def t(s: float) -> float:
    return 1e-6 + s / 1e9


def m_loggp(s: int) -> float:
    return OVH + 1e-6 + (s - 1) * 1e-9 + OVH


def _run(op: str, network: str, protocol: str, collectives: str,
         blocking: bool = True) -> bsim.Result:
    def main() -> None:
        comm = MPI.COMM_WORLD
        r = comm.rank
        whole = [np.zeros(sum(COUNTS), np.uint8), COUNTS] if r == ROOT else None
        if op == "Scatterv":
            args: tuple = (whole, np.zeros(COUNTS[r], np.uint8))
        else:
            args = (np.zeros(COUNTS[r], np.uint8), whole)
        if blocking:
            getattr(comm, op)(*args, root=ROOT)
        else:
            getattr(comm, "I" + op.lower())(*args, root=ROOT).Wait()
    return bsim.simulate(main, ranks=P, network=network, protocol=protocol,
                         collectives=collectives)


@pytest.mark.parametrize("c", [0.0, 3e-7])
def test_expanded_under_bsim_by_hand(c: float) -> None:
    """Scatterv: 0 -> t(300), 3 -> c + t(1000), 4 -> 2c + t(2000), root 3c, rank 1 0.
    Gatherv: senders c, rank 1 0, root t(300) + t(1000) + t(2000).  Three messages each."""
    sc = _run("Scatterv", HOCKNEY, f"bsim:send_cost={c}", "algorithmic")
    assert sc.finish.tolist() == pytest.approx(
        [t(300), 0.0, 3 * c, c + t(1000), 2 * c + t(2000)], rel=1e-12, abs=1e-18)
    assert sc.total_messages == 3
    ga = _run("Gatherv", HOCKNEY, f"bsim:send_cost={c}", "algorithmic")
    assert ga.finish.tolist() == pytest.approx(
        [c, 0.0, t(300) + t(1000) + t(2000), c, c], rel=1e-12, abs=1e-18)
    assert ga.total_messages == 3


def test_expanded_under_loggp_by_hand() -> None:
    """Scatterv: 1.699, 0, 0.6, 2.899, 4.898 us; Gatherv: 0.2, 0, 3.399, 0.2, 0.2 us."""
    sc = _run("Scatterv", LOGGP, "loggp", "algorithmic")
    assert sc.finish.tolist() == pytest.approx(
        [1.699e-6, 0.0, 0.6e-6, 2.899e-6, 4.898e-6], rel=1e-9, abs=1e-18)
    ga = _run("Gatherv", LOGGP, "loggp", "algorithmic")
    assert ga.finish.tolist() == pytest.approx(
        [0.2e-6, 0.0, 3.399e-6, 0.2e-6, 0.2e-6], rel=1e-9, abs=1e-18)


@pytest.mark.parametrize(("network", "protocol"), [(HOCKNEY, "bsim"), (LOGGP, "loggp")])
@pytest.mark.parametrize("source,blocking", [("analytic", True), ("algorithmic", False)])
def test_formula_by_hand(network: str, protocol: str, source: str, blocking: bool) -> None:
    """The port model over the non-empty blocks in rank order (the module docstring)."""
    m = t if protocol == "bsim" else m_loggp
    s0, s3, s4 = m(300), m(300) + m(1000), m(300) + m(1000) + m(2000)
    sc = _run("Scatterv", network, protocol, source, blocking)
    assert sc.finish.tolist() == pytest.approx([s0, 0.0, s4, s3, s4], rel=1e-12, abs=1e-18)
    ga = _run("Gatherv", network, protocol, source, blocking)
    assert ga.finish.tolist() == pytest.approx(
        [m(300), 0.0, m(300) + m(1000) + m(2000), m(1000), m(2000)], rel=1e-12, abs=1e-18)


def test_lowercase_scatter_sends_each_pickle_as_it_is() -> None:
    """mpi4py's scatter: the 8-byte lengths by a binomial Scatter (fixed size), then the
    pickles by a Scatterv.  8 ranks, root 0, a 100 kB object for rank 7, 10-byte ones
    elsewhere; expanded under the bsim protocol (free sends).  The lengths reach rank 7
    through 0 -> 4 -> 6 -> 7 (32, 16, 8 bytes) at t(32) + t(16) + t(8); its pickle, sent
    at 0, is received after that: + t(its pickle).  Rank 1 gets its length from 0 in the
    last round, t(8), then its own pickle.  (Each pickle went out as the average one.)"""
    import pickle
    objs = [bytes(100_000 if r == 7 else 10) for r in range(8)]
    size = [len(pickle.dumps(x, pickle.HIGHEST_PROTOCOL)) for x in objs]

    def main() -> int:
        comm = MPI.COMM_WORLD
        return len(comm.scatter(objs if comm.rank == 0 else None, root=0))
    res = bsim.simulate(main, 8, network=HOCKNEY, collectives="algorithmic", protocol="bsim")
    assert res.returns == [len(x) for x in objs]
    assert res.finish[7] == pytest.approx(t(32) + t(16) + t(8) + t(size[7]), rel=1e-12)
    assert res.finish[1] == pytest.approx(t(8) + t(size[1]), rel=1e-12)


@pytest.mark.parametrize("blocking", [True, False])
def test_gatherv_whose_only_block_is_the_roots(blocking):
    """Every non-root block empty and the root first to arrive: MPICH's linear root posts
    no receive and returns at once (its own block is a local copy), the others send
    nothing.  The expanded root finished before the others had arrived and then read
    their (absent) contributions: TypeError.  Now: no communication time for anyone, the
    root's block in place, the rest of its buffer untouched, and the blocking root done
    at 0 (the nonblocking form completes as its formula twin, when all have arrived)."""
    counts = [0, 0, 4, 0, 0]

    def main() -> list[int]:
        comm = MPI.COMM_WORLD
        r = comm.rank
        send = np.full(counts[r], 7, dtype="u1")
        if r != ROOT:
            bsim.add_time(1e-3)   # the root arrives first
            if blocking:
                comm.Gatherv(send, None, root=ROOT)
            else:
                comm.Igatherv(send, None, root=ROOT).Wait()
            return []
        recv = np.zeros(6, dtype="u1")
        if blocking:
            comm.Gatherv(send, [recv, counts], root=ROOT)
        else:
            comm.Igatherv(send, [recv, counts], root=ROOT).Wait()
        return recv.tolist()

    res = bsim.simulate(main, ranks=P, network=HOCKNEY, collectives="algorithmic", protocol="bsim")
    assert res.returns[ROOT] == [7, 7, 7, 7, 0, 0]
    assert list(res.comm) == [0.0] * P
    assert res.finish[ROOT] == (0.0 if blocking else 1e-3)
