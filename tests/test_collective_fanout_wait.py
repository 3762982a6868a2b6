"""Fan-out collectives (bcast, scatter, scatterv) posted and waited at once cost the blocking call.

docs/collectives.md: "Posted and waited at once it costs exactly the blocking call under
both" protocols.  The blocking call's fan-out rule is: the root finishes at ``own + T``, a
non-root at ``max(own, root) + T``.  Under ``loggp`` a nonblocking collective runs in the
background, and a non-root that posts after the root cannot finish its part before it posted
(before the fix it finished at ``root + T``: 16.006 ms instead of 17.006 ms for an 8 MB
Ibcast whose non-roots came 1 ms late).
"""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI

HOCKNEY = "hockney:latency=1e-6,bandwidth=1e9"
P = 4
# arrival patterns (ms per rank) and roots: late non-roots, a late root, mixed arrivals
PATTERNS = [([0.0, 1.0, 1.0, 1.0], 0), ([0.0, 0.0, 2.0, 0.0], 2), ([3.0, 0.0, 5.0, 1.0], 1),
            ([3.0, 0.0, 5.0, 1.0], 2)]


def _program(op: str, form: str, nbytes: int, arrive: list[float], root: int):
    blk = nbytes // P

    def main():
        comm = MPI.COMM_WORLD
        bsim.add_time(arrive[comm.rank] * 1e-3)
        if op == "Bcast":
            args: tuple = (np.zeros(nbytes, np.uint8),)
        elif op == "Scatter":
            args = (np.zeros(nbytes, np.uint8), np.zeros(blk, np.uint8))
        else:   # Scatterv (equal blocks: uneven ones are priced by the mpi layer's sizes)
            counts = [blk] * P
            args = ([np.zeros(sum(counts), np.uint8), counts], np.zeros(blk, np.uint8))
        if form == "blocking":
            getattr(comm, op)(*args, root=root)
        elif form == "nonblocking":
            getattr(comm, "I" + op.lower())(*args, root=root).Wait()
        else:
            req = getattr(comm, op + "_init")(*args, root=root)
            req.Start()
            req.Wait()
    return main


@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
@pytest.mark.parametrize("op", ["Bcast", "Scatter", "Scatterv"])
@pytest.mark.parametrize("nbytes", [4000, 8 * 10**6])   # eager, and rendezvous under loggp
@pytest.mark.parametrize("arrive,root", PATTERNS)
def test_fanout_posted_and_waited_at_once_costs_the_blocking_call(protocol, op, nbytes,
                                                                  arrive, root):
    """Ibcast/Iscatter/Iscatterv + Wait and their persistent forms end as the blocking call,
    whose times follow the fan-out rule: root own + T, others max(own, root) + T (in the
    linear Scatterv, the k-th non-root in rank order: + k T / (P - 1), its own message's
    place in the root's loop over ranks 0 .. P-1)."""
    def run(form):
        return bsim.simulate(_program(op, form, nbytes, arrive, root), ranks=P,
                             network=HOCKNEY, protocol=protocol)

    blocking = run("blocking")
    t = [a * 1e-3 for a in arrive]
    T = blocking.finish[root] - t[root]           # the root pays T after its arrival
    assert T > 0
    for r in range(P):                            # the rule, checked on the blocking call
        # Scatterv is linear (MPICH): the k-th non-root in rank order pays the root's first
        # k of P - 1 sends (k = r + 1 below the root, r above it)
        k = r + 1 if r < root else r
        part = k / (P - 1) if op == "Scatterv" and r != root else 1
        assert blocking.finish[r] == pytest.approx(max(t[r], t[root]) + T * part, rel=1e-12)
    for form in ("nonblocking", "persistent"):
        res = run(form)
        assert res.finish.tolist() == pytest.approx(blocking.finish.tolist(), rel=1e-12), form
        assert res.wait.tolist() == pytest.approx(blocking.wait.tolist(), abs=1e-15), form


def test_late_ibcast_under_loggp_by_hand():
    """The reviewer's case: 8 MB binomial bcast on 4 ranks (MPICH: P < 8), ranks 1-3 1 ms late.

    loggp on Hockney 1 us / 1 GB/s, above the eager limit: one message is a request-to-send,
    a clear-to-send and the data, 3 us + 8 ms = 8.003 ms; T = 2 of them = 16.006 ms.  The root
    ends at T, the non-roots at 1 ms + T = 17.006 ms (the bug gave 16.006 ms).
    """
    res = bsim.simulate(_program("Bcast", "nonblocking", 8 * 10**6, [0.0, 1.0, 1.0, 1.0], 0),
                        ranks=P, network=HOCKNEY, protocol="loggp")
    T = 2 * (3e-6 + 8e-3)
    assert res.finish.tolist() == pytest.approx([T, 1e-3 + T, 1e-3 + T, 1e-3 + T], rel=1e-12)
