"""Gatherv and Scatterv run MPICH's linear algorithm, expanded and as a formula, by hand.

MPICH (``MPIR_Gatherv``, ``MPIR_Scatterv``: "the array of recvcounts is valid only on the
root, we cannot do a tree algorithm") posts one irecv or isend per non-root with a
non-empty block, in rank order ``i = 0 .. P-1`` (gatherv_allcomm_linear.c,
scatterv_allcomm_linear.c), then waits for all.  bsim ran the binomial tree for both.

Five ranks, root 2, equal blocks of ``b`` bytes; the root's ``k``-th message goes to the
``k``-th non-root in rank order (ranks 0, 1, 3, 4 are k = 1..4).  Derivations:

* ``bsim`` protocol, Hockney ``t(s) = 1 us + s / 1 GB/s``, a send charged ``c`` (default
  0): the scatter root sends to k = 1, 2, ... at ``(k-1) c`` and ends at ``(P-1) c``;
  member k receives at ``(k-1) c + t(b)``.  In the gather each non-root sends at 0 and
  ends at ``c``; the root pays each message in turn, ``(P-1) t(b)``.
* ``loggp`` protocol, LogGP ``L = 1 us, o = 0.2 us, g = 0.5 us, G = 1 ns/B`` (eager): a
  send costs ``o``; the root's NIC injects one message per gap ``max(g, (b-1) G)``;
  a message arrives ``wire = L + (b-1) G`` after injection and the receive adds ``o``.
  Scatter member k: ``o + (k-1) gap + wire + o`` (the gap exceeds ``o``, so the NIC, not
  the CPU, spaces them); root ``(P-1) o``.  Gather: non-roots ``o``; the root's receives
  all arrive at ``o + wire`` and complete one ``o`` after another: ``o + wire + (P-1) o``.
* The formula (``analytic``, and ``algorithmic``'s twin for nonblocking calls) is the
  port model with one message ``m = o + wire + o`` (``loggp``) or ``t(b)`` (``bsim``):
  scatter member k ``k m``, root ``(P-1) m``; gather non-root ``m`` (one message, one
  latency), root ``(P-1) m``.
"""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI

P, ROOT = 5, 2
HOCKNEY = "hockney:latency=1e-6,bandwidth=1e9"
LOGGP = "loggp:L=1e-6,o=2e-7,g=5e-7,G=1e-9"
L, OVH, GAP_MIN, G = 1e-6, 2e-7, 5e-7, 1e-9


def t(s: float) -> float:
    return 1e-6 + s / 1e9


def rel(rank: int) -> int:
    """The position of *rank*'s block in the root's loop over ranks 0 .. P-1 (root skipped)."""
    return rank + 1 if rank < ROOT else rank


def _program(op: str, b: int, blocking: bool = True):
    def main() -> None:
        comm = MPI.COMM_WORLD
        root = comm.rank == ROOT
        whole = [np.zeros(P * b, np.uint8), [b] * P] if root else None
        if op == "Scatterv":
            args: tuple = (whole, np.zeros(b, np.uint8))
        else:
            args = (np.zeros(b, np.uint8), whole)
        if blocking:
            getattr(comm, op)(*args, root=ROOT)
        else:
            getattr(comm, "I" + op.lower())(*args, root=ROOT).Wait()
    return main


def _run(op: str, b: int, network: str, protocol: str, collectives: str,
         blocking: bool = True) -> bsim.Result:
    return bsim.simulate(_program(op, b, blocking), ranks=P, network=network,
                         protocol=protocol, collectives=collectives)


@pytest.mark.parametrize("c", [0.0, 3e-7])
def test_expanded_scatterv_under_bsim_by_hand(c: float) -> None:
    """Sends free (c = 0): every non-root at t(b); charged c: member k at (k-1) c + t(b)."""
    b = 1000
    res = _run("Scatterv", b, HOCKNEY, f"bsim:send_cost={c}", "algorithmic")
    want = [(P - 1) * c if r == ROOT else (rel(r) - 1) * c + t(b) for r in range(P)]
    assert res.finish.tolist() == pytest.approx(want, rel=1e-12, abs=1e-18)
    assert res.collective_algorithms == {"scatter": {"linear": 1}}
    assert res.total_messages == P - 1


@pytest.mark.parametrize("c", [0.0, 3e-7])
def test_expanded_gatherv_under_bsim_by_hand(c: float) -> None:
    """Non-roots end at c (their one send); the root receives P - 1 in turn: (P-1) t(b)."""
    b = 1000
    res = _run("Gatherv", b, HOCKNEY, f"bsim:send_cost={c}", "algorithmic")
    want = [(P - 1) * t(b) if r == ROOT else c for r in range(P)]
    assert res.finish.tolist() == pytest.approx(want, rel=1e-12, abs=1e-18)
    assert res.collective_algorithms == {"gather": {"linear": 1}}
    assert res.total_messages == P - 1


@pytest.mark.parametrize("b", [100, 1000])   # the gap is g (0.5 us), then (b-1) G (0.999 us)
def test_expanded_scatterv_and_gatherv_under_loggp_by_hand(b: int) -> None:
    """Scatter member k: o + (k-1) gap + wire + o; root (P-1) o.  Gather: non-roots o,
    root o + wire + (P-1) o."""
    gap = max(GAP_MIN, (b - 1) * G)
    wire = L + (b - 1) * G
    sc = _run("Scatterv", b, LOGGP, "loggp", "algorithmic")
    want = [(P - 1) * OVH if r == ROOT else OVH + (rel(r) - 1) * gap + wire + OVH
            for r in range(P)]
    assert sc.finish.tolist() == pytest.approx(want, rel=1e-12)
    ga = _run("Gatherv", b, LOGGP, "loggp", "algorithmic")
    want = [OVH + wire + (P - 1) * OVH if r == ROOT else OVH for r in range(P)]
    assert ga.finish.tolist() == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(("network", "protocol"), [(HOCKNEY, "bsim"), (LOGGP, "loggp")])
@pytest.mark.parametrize("source,blocking", [("analytic", True), ("algorithmic", False)])
def test_formula_prices_each_member_by_its_own_messages(network: str, protocol: str,
                                                        source: str, blocking: bool) -> None:
    """Scatterv member k: k m; Gatherv non-root: m (it paid (P-1) t(b/P) for its block,
    P - 1 latencies for one message); both roots (P-1) m.  Under analytic, and the
    algorithmic twin of Iscatterv/Igatherv."""
    b = 1000
    m = t(b) if protocol == "bsim" else OVH + L + (b - 1) * G + OVH
    sc = _run("Scatterv", b, network, protocol, source, blocking)
    assert sc.finish.tolist() == pytest.approx(
        [(P - 1) * m if r == ROOT else rel(r) * m for r in range(P)], rel=1e-12)
    ga = _run("Gatherv", b, network, protocol, source, blocking)
    assert ga.finish.tolist() == pytest.approx(
        [(P - 1) * m if r == ROOT else m for r in range(P)], rel=1e-12)
    assert ga.collective_algorithms == {"gather": {"linear": 1}}


def test_plain_gather_and_scatter_stay_binomial() -> None:
    """MPI_Gather and MPI_Scatter keep MPICH's binomial tree (ceil(log2 5) = 3 rounds)."""
    b = 1000

    def main() -> None:
        comm = MPI.COMM_WORLD
        whole = np.zeros(P * b, np.uint8) if comm.rank == ROOT else None
        comm.Scatter(whole, np.zeros(b, np.uint8), root=ROOT)
        comm.Gather(np.zeros(b, np.uint8), whole, root=ROOT)
    res = bsim.simulate(main, ranks=P, network=HOCKNEY, collectives="algorithmic")
    assert res.collective_algorithms == {"gather": {"binomial": 1}, "scatter": {"binomial": 1}}


def test_a_gather_override_applies_to_gatherv() -> None:
    """``gather=binomial`` names the plain op and its v-variant."""
    res = _run("Gatherv", 1000, HOCKNEY, "bsim", "algorithmic:gather=binomial")
    assert res.collective_algorithms == {"gather": {"binomial": 1}}
