"""Every v-collective's data against real MPICH on random valid counts and displacements.

hypothesis draws batches of cases (counts 0..4 per block, blocks laid out in a random
order with random gaps, so receive regions never overlap; send regions may); each batch
runs in one ``mpiexec -n 3`` launch and in one bsim run, and every rank's receive
buffers (initialised to -1, so untouched elements count too) must be equal.
"""

from __future__ import annotations

import json

from conftest import needs_mpiexec, real_mpi_returns, simulated_returns
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

P = 3
CASES_PER_LAUNCH = 12

PROGRAM = '''
import numpy as np
from mpi4py import MPI

CASES = __CASES__


def main():
    comm = MPI.COMM_WORLD
    r = comm.rank
    out = []
    for case in CASES:
        kind = case["kind"]
        if kind == "gatherv":
            root, counts, displs, n = case["root"], case["counts"], case["displs"], case["n"]
            send = np.arange(counts[r], dtype="f8") + 100 * r
            recv = np.full(n, -1.0) if r == root else None
            comm.Gatherv(send, [recv, counts, displs, MPI.DOUBLE] if r == root else None,
                         root=root)
            out.append(recv.tolist() if r == root else None)
        elif kind == "scatterv":
            root, counts, displs, n = case["root"], case["counts"], case["displs"], case["n"]
            send = np.arange(n, dtype="i4") * 7 if r == root else None
            recv = np.full(counts[r], -1, dtype="i4")
            comm.Scatterv([send, counts, displs, MPI.INT] if r == root else None, recv,
                          root=root)
            out.append(recv.tolist())
        elif kind == "allgatherv":
            counts, displs, n = case["counts"], case["displs"], case["n"]
            send = np.arange(counts[r], dtype="i8") + 10 * r
            recv = np.full(n, -1, dtype="i8")
            comm.Allgatherv(send, [recv, counts, displs, MPI.INT64_T])
            out.append(recv.tolist())
        elif kind == "alltoallv":
            c = case["c"]   # c[i][j]: elements rank i sends to rank j
            sd, rd, sn, rn = case["sd"][r], case["rd"][r], case["sn"][r], case["rn"][r]
            send = np.arange(sn, dtype="f8") + 1000 * r
            recv = np.full(rn, -1.0)
            comm.Alltoallv([send, c[r], sd, MPI.DOUBLE],
                           [recv, [c[j][r] for j in range(len(c))], rd, MPI.DOUBLE])
            out.append(recv.tolist())
        elif kind == "reduce_scatter":
            counts = case["counts"]
            send = (np.arange(sum(counts), dtype="i8") + 1) * (r + 1)
            recv = np.full(counts[r], -1, dtype="i8")
            comm.Reduce_scatter(send, recv, counts, op=MPI.SUM)
            out.append(recv.tolist())
        elif kind == "alltoallw":   # byte displacements, one datatype per block
            c = case["c"]
            sd = [8 * d for d in case["sd"][r]]
            rd = [8 * d for d in case["rd"][r]]
            send = np.arange(case["sn"][r], dtype="f8") + 1000 * r
            recv = np.full(case["rn"][r], -1.0)
            vec = [MPI.DOUBLE] * len(c)
            comm.Alltoallw([send, c[r], sd, vec],
                           [recv, [c[j][r] for j in range(len(c))], rd, vec])
            out.append(recv.tolist())
    return out
'''


def _layout(counts: list[int], order: list[int], gaps: list[int]) -> tuple[list[int], int]:
    """Displacements placing the blocks in *order* with *gaps* before each: disjoint."""
    displs, at = [0] * len(counts), 0
    for k, block in enumerate(order):
        at += gaps[k]
        displs[block] = at
        at += counts[block]
    return displs, at + gaps[-1]


counts_st = st.lists(st.integers(0, 4), min_size=P, max_size=P)
gaps_st = st.lists(st.integers(0, 2), min_size=P, max_size=P)
order_st = st.permutations(range(P))


@st.composite
def rooted(draw, kind: str) -> dict:
    counts, order, gaps = draw(counts_st), draw(order_st), draw(gaps_st)
    displs, n = _layout(counts, order, gaps)
    if kind == "scatterv":   # send blocks may overlap: any start within the buffer
        n = max(n, 1)
        displs = [draw(st.integers(0, max(0, n - c))) for c in counts]
    return {"kind": kind, "root": draw(st.integers(0, P - 1)), "counts": counts,
            "displs": displs, "n": n}


@st.composite
def allgatherv(draw) -> dict:
    counts, order, gaps = draw(counts_st), draw(order_st), draw(gaps_st)
    displs, n = _layout(counts, order, gaps)
    return {"kind": "allgatherv", "counts": counts, "displs": displs, "n": n}


@st.composite
def alltoallv(draw) -> dict:
    c = [draw(counts_st) for _ in range(P)]
    sd, rd, sn, rn = [], [], [], []
    for r in range(P):
        sendc = c[r]
        d, n = _layout(sendc, draw(order_st), draw(gaps_st))
        sd.append(d)
        sn.append(n)
        recvc = [c[j][r] for j in range(P)]
        d, n = _layout(recvc, draw(order_st), draw(gaps_st))
        rd.append(d)
        rn.append(n)
    return {"kind": "alltoallv", "c": c, "sd": sd, "rd": rd, "sn": sn, "rn": rn}


@st.composite
def reduce_scatter(draw) -> dict:
    return {"kind": "reduce_scatter", "counts": draw(counts_st)}


@st.composite
def alltoallw(draw) -> dict:
    return dict(draw(alltoallv()), kind="alltoallw")


case_st = st.one_of(rooted("gatherv"), rooted("scatterv"), allgatherv(), alltoallv(),
                    reduce_scatter(), alltoallw())


@needs_mpiexec
@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(case_st, min_size=CASES_PER_LAUNCH, max_size=CASES_PER_LAUNCH))
def test_v_collectives_match_mpich(cases: list[dict]) -> None:
    """Gatherv, Scatterv, Allgatherv, Alltoallv, Alltoallw, Reduce_scatter: bsim's receive
    buffers equal MPICH's."""
    code = PROGRAM.replace("__CASES__", json.dumps(cases))
    assert simulated_returns(P, code, as_json=True) == real_mpi_returns(P, code)
