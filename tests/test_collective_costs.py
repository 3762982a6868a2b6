"""Collective-cost models: analytic algorithms, the MILC paper's c + d*log2 P, measured tables."""

from __future__ import annotations

import pytest

import bsim
from netmodels.collective_costs import (
    ALGORITHMS,
    OPS,
    Analytic,
    CLog,
    CollectiveSpecError,
    Table,
    build_collective_model,
    canonical_op,
    default_algorithm,
    describe_collective_models,
)
from netmodels.flat import Hockney, LogGP

# Hockney l = 1 us, w = 1 GB/s: a message of s bytes takes 1e-6 + s*1e-9 seconds.
L, W = 1e-6, 1e9


def hockney(nbytes):
    return L + nbytes / W


def t_alg(op, alg, nprocs, nbytes, p2p=hockney):
    return Analytic({op: alg}).time(op, nprocs, nbytes, p2p)


# -- analytic: hand-derived numbers -----------------------------------------------------

def test_binomial_bcast_p8():
    """Binomial bcast of 1000 B on 8 ranks takes 3 rounds of one message."""
    # 3*(1e-6 + 1000/1e9) = 3*2e-6 = 6e-6
    assert t_alg("bcast", "binomial", 8, 1000) == pytest.approx(6e-6, rel=1e-12)


def test_binomial_bcast_non_power_of_two():
    """Binomial bcast on 5 ranks takes ceil(log2 5) = 3 rounds."""
    assert t_alg("bcast", "binomial", 5, 1000) == pytest.approx(6e-6, rel=1e-12)
    # P=3: ceil(log2 3) = 2 -> 4e-6
    assert t_alg("bcast", "binomial", 3, 1000) == pytest.approx(4e-6, rel=1e-12)


def test_linear_bcast_serialises_root():
    """Linear bcast on 4 ranks: the root sends 3 messages one after another."""
    # 3*(1e-6 + 1e-6) = 6e-6
    assert t_alg("bcast", "linear", 4, 1000) == pytest.approx(6e-6, rel=1e-12)


def test_binomial_reduce_p8():
    """Binomial reduce mirrors bcast: 3 rounds on 8 ranks."""
    assert t_alg("reduce", "binomial", 8, 1000) == pytest.approx(6e-6, rel=1e-12)


def test_dissemination_barrier():
    """Dissemination barrier costs ceil(log2 P) zero-byte messages."""
    # P=5: 3*1e-6; P=8: 3*1e-6; P=9: 4*1e-6
    assert t_alg("barrier", "dissemination", 5, 0) == pytest.approx(3e-6, rel=1e-12)
    assert t_alg("barrier", "dissemination", 8, 0) == pytest.approx(3e-6, rel=1e-12)
    assert t_alg("barrier", "dissemination", 9, 0) == pytest.approx(4e-6, rel=1e-12)


def test_linear_barrier():
    """Linear barrier: P-1 messages in to the root, P-1 out."""
    # P=4: 2*3*1e-6 = 6e-6
    assert t_alg("barrier", "linear", 4, 0) == pytest.approx(6e-6, rel=1e-12)


def test_binomial_gather_and_scatter():
    """Binomial gather/scatter move halving subtrees: K*l + (P-1)/P*n/w."""
    # P=8, n=8000 (blocks of 1000): subtrees of 1, 2, 4 blocks ->
    # (1e-6+1e-6) + (1e-6+2e-6) + (1e-6+4e-6) = 3e-6 + 7e-6 = 10e-6
    assert t_alg("gather", "binomial", 8, 8000) == pytest.approx(10e-6, rel=1e-12)
    assert t_alg("scatter", "binomial", 8, 8000) == pytest.approx(10e-6, rel=1e-12)
    # P=5, n=5000: the root's subtrees are min(1,4)=1, min(2,3)=2, min(4,1)=1 blocks
    # -> 3*1e-6 + (1000+2000+1000)/1e9 = 7e-6
    assert t_alg("gather", "binomial", 5, 5000) == pytest.approx(7e-6, rel=1e-12)
    assert t_alg("scatter", "binomial", 5, 5000) == pytest.approx(7e-6, rel=1e-12)


def test_linear_gather():
    """Linear gather: the root receives P-1 blocks one after another."""
    # P=4, n=4000: 3*(1e-6 + 1000/1e9) = 6e-6
    assert t_alg("gather", "linear", 4, 4000) == pytest.approx(6e-6, rel=1e-12)


def test_recursive_doubling_allreduce():
    """Recursive doubling: log2 P full exchanges, two more when P is not a power of 2."""
    # P=8: 3*(1e-6 + 1e-6) = 6e-6
    assert t_alg("allreduce", "recursive_doubling", 8, 1000) == pytest.approx(6e-6, rel=1e-12)
    # P=6: fold (1) + log2 4 (2) + unfold (1) = 4*2e-6 = 8e-6
    assert t_alg("allreduce", "recursive_doubling", 6, 1000) == pytest.approx(8e-6, rel=1e-12)


def test_rabenseifner_allreduce():
    """Rabenseifner: 2*log2 P latencies and 2*(P-1)/P*n bytes."""
    # P=8, n=8000: halving 4000, 2000, 1000 then doubling 1000, 2000, 4000:
    # 6*1e-6 + 2*7000/1e9 = 20e-6
    assert t_alg("allreduce", "rabenseifner", 8, 8000) == pytest.approx(20e-6, rel=1e-12)
    # P=6, n=8000: fold 8000 + halving 4000, 2000 + doubling 2000, 4000 + unfold 8000:
    # 6*1e-6 + (8000+4000+2000+2000+4000+8000)/1e9 = 6e-6 + 28e-6 = 34e-6
    assert t_alg("allreduce", "rabenseifner", 6, 8000) == pytest.approx(34e-6, rel=1e-12)


def test_ring_allreduce():
    """Ring allreduce: 2(P-1) steps of n/P bytes."""
    # P=4, n=4000: 6*(1e-6 + 1000/1e9) = 12e-6
    assert t_alg("allreduce", "ring", 4, 4000) == pytest.approx(12e-6, rel=1e-12)


def test_reduce_bcast_allreduce():
    """reduce_bcast: a binomial reduce then a binomial bcast, 2*ceil(log2 P) messages."""
    # P=5: 2*3*(1e-6 + 1e-6) = 12e-6
    assert t_alg("allreduce", "reduce_bcast", 5, 1000) == pytest.approx(12e-6, rel=1e-12)


def test_rabenseifner_reduce():
    """Rabenseifner reduce: halving reduce-scatter then binomial gather of blocks."""
    # P=4, n=4000: halving 2000, 1000 then gather 1000, 2000 -> 4e-6 + 6000e-9 = 10e-6
    assert t_alg("reduce", "rabenseifner", 4, 4000) == pytest.approx(10e-6, rel=1e-12)
    # P=5: fold 4000 first: 5e-6 + 5e-6 (fold) = 15e-6
    assert t_alg("reduce", "rabenseifner", 5, 4000) == pytest.approx(15e-6, rel=1e-12)


def test_allgather_algorithms():
    """Recursive doubling, Bruck and ring allgather on hand-checkable sizes."""
    # RD, P=8, n=8000: 1000, 2000, 4000 -> 3e-6 + 7e-6 = 10e-6
    assert t_alg("allgather", "recursive_doubling", 8, 8000) == pytest.approx(10e-6, rel=1e-12)
    # Bruck, P=5, n=5000: min(1,4)=1, min(2,3)=2, min(4,1)=1 blocks -> 3e-6 + 4e-6 = 7e-6
    assert t_alg("allgather", "bruck", 5, 5000) == pytest.approx(7e-6, rel=1e-12)
    # Ring, P=5, n=5000: 4*(1e-6 + 1e-6) = 8e-6
    assert t_alg("allgather", "ring", 5, 5000) == pytest.approx(8e-6, rel=1e-12)


def test_recursive_doubling_allgather_falls_back_to_bruck():
    """On a non-power-of-two, recursive-doubling allgather is costed as Bruck (MPICH's choice)."""
    model = Analytic({"allgather": "recursive_doubling"})
    assert model.algorithm("allgather", 5, 5000) == "bruck"
    assert model.time("allgather", 5, 5000, hockney) == pytest.approx(7e-6, rel=1e-12)


def test_alltoall_algorithms():
    """Pairwise exchange and Bruck alltoall."""
    # pairwise, P=8, n=8000 (1000 per destination): 7*(1e-6 + 1e-6) = 14e-6
    assert t_alg("alltoall", "pairwise", 8, 8000) == pytest.approx(14e-6, rel=1e-12)
    # Bruck, P=8: 3 rounds of 4 blocks: 3*(1e-6 + 4e-6) = 15e-6
    assert t_alg("alltoall", "bruck", 8, 8000) == pytest.approx(15e-6, rel=1e-12)
    # Bruck, P=5, n=5000: indices with bit 0 set {1,3}, bit 1 {2,3}, bit 2 {4}:
    # (1e-6+2e-6) + (1e-6+2e-6) + (1e-6+1e-6) = 8e-6
    assert t_alg("alltoall", "bruck", 5, 5000) == pytest.approx(8e-6, rel=1e-12)


def test_reduce_scatter_algorithms():
    """Recursive halving (with folding) and pairwise reduce_scatter."""
    # RH, P=8, n=8000: 4000, 2000, 1000 -> 3e-6 + 7e-6 = 10e-6
    assert t_alg("reduce_scatter", "recursive_halving", 8, 8000) == pytest.approx(
        10e-6, rel=1e-12)
    # RH, P=6, n=6000 (b = 1000): fold 6000 (7e-6); the 4 survivors carry 2, 2, 1, 1
    # blocks (MPICH's newcnts), so the lower half sends 2000, the upper 4000 (5e-6); then
    # survivors 0 and 1 swap 2000 each (3e-6); unfold 1000 (2e-6): 17e-6
    assert t_alg("reduce_scatter", "recursive_halving", 6, 6000) == pytest.approx(
        17e-6, rel=1e-12)
    # pairwise, P=4, n=4000: 3*(1e-6 + 1e-6) = 6e-6
    assert t_alg("reduce_scatter", "pairwise", 4, 4000) == pytest.approx(6e-6, rel=1e-12)


def test_scan_and_exscan():
    """Scan by recursive doubling takes ceil(log2 P) full messages; linear takes P-1."""
    # P=5: 3*2e-6 = 6e-6; linear 4*2e-6 = 8e-6
    assert t_alg("scan", "recursive_doubling", 5, 1000) == pytest.approx(6e-6, rel=1e-12)
    assert t_alg("exscan", "recursive_doubling", 5, 1000) == pytest.approx(6e-6, rel=1e-12)
    assert t_alg("scan", "linear", 5, 1000) == pytest.approx(8e-6, rel=1e-12)


def test_scatter_allgather_bcast():
    """Long-message bcast: binomial scatter then ring or recursive-doubling allgather."""
    # P=8, n=8000: scatter 10e-6 (as gather above) + ring 7*(1e-6 + 1e-6) = 24e-6
    assert t_alg("bcast", "scatter_ring_allgather", 8, 8000) == pytest.approx(24e-6, rel=1e-12)
    # ... + recursive doubling 1000, 2000, 4000 = 10e-6 -> 20e-6
    assert t_alg("bcast", "scatter_doubling_allgather", 8, 8000) == pytest.approx(
        20e-6, rel=1e-12)


@pytest.mark.parametrize("op", OPS)
def test_one_rank_costs_nothing(op):
    """Every analytic algorithm on one rank costs 0."""
    for alg in ALGORITHMS[op]:
        assert t_alg(op, alg, 1, 1000) == 0.0


def test_p2p_forms_agree():
    """A callable, a Hockney model and an object with latency/bandwidth give one answer."""
    class LB:
        latency, bandwidth = L, W
    model = Analytic({"allreduce": "ring"})
    expected = model.time("allreduce", 7, 7000, hockney)
    assert model.time("allreduce", 7, 7000, Hockney(latency=L, bandwidth=W)) == expected
    assert model.time("allreduce", 7, 7000, LB()) == expected


def test_loggp_p2p_uses_model_cost():
    """A LogGP model is costed through its cost(): 2o + L + (s-1)G per message."""
    net = LogGP(L=2e-6, o=1e-6, g=0.0, G=1e-9)
    # binomial bcast, P=4, 1001 B: 2 * (2e-6 + 2e-6 + 1000e-9) = 10e-6
    assert t_alg("bcast", "binomial", 4, 1001, net) == pytest.approx(10e-6, rel=1e-12)


def test_analytic_needs_p2p():
    """The analytic model refuses to run without a p2p cost."""
    with pytest.raises(CollectiveSpecError, match="needs p2p"):
        Analytic().time("bcast", 4, 8)


def test_v_variants_cost_as_plain_ops():
    """allgatherv and reduce_scatter_block select as their plain op on the total bytes
    (MPICH: every rank knows the counts)."""
    model = Analytic()
    for v, plain in [("allgatherv", "allgather"), ("MPI_Reduce_scatter_block", "reduce_scatter")]:
        for n in (1200, 12000, 1200000):
            assert model.time(v, 12, n, hockney) == model.time(plain, 12, n, hockney)


def test_v_variants_follow_mpichs_own_selection():
    """MPICH's Gatherv/Scatterv are linear and its Alltoallv/w isend/irecv (pairwise cost)
    whatever the size (MPIR_Gatherv: "the array of recvcounts is valid only on the root,
    we cannot do a tree algorithm"; MPIR_Alltoallv: "we don't know the total message size").
    12 ranks, Hockney 1 us + 1 ns/B: gatherv of 12000 B is 11 t(1000) = 22 us where binomial
    gather is 15 us; alltoallv of 100 B blocks is 11 t(100) = 12.1 us where plain alltoall
    (<= 256 B a block, P >= 8) is Bruck."""
    model = Analytic()
    assert default_algorithm("alltoall", 12, 1200) == "bruck"
    for v in ("gatherv", "Scatterv", "MPI_Gatherv"):
        assert default_algorithm(v, 12, 12000) == "linear"
        assert model.time(v, 12, 12000, hockney) == pytest.approx(11 * 2e-6, rel=1e-12)
    for v in ("alltoallv", "Alltoallw"):
        assert default_algorithm(v, 12, 1200) == "pairwise"
        assert model.time(v, 12, 1200, hockney) == pytest.approx(11 * 1.1e-6, rel=1e-12)


@pytest.mark.parametrize("P", [2, 3, 8, 12, 16])
def test_a_size_no_member_shares_picks_without_the_size(P):
    """nbytes None (members' sizes differ): MPICH's v choice, pairwise alltoall, else the
    short-message choice, the same whatever each member's own size is."""
    short = {op: default_algorithm(op, P, 0) for op in
             ("bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
              "reduce_scatter", "barrier", "scan", "exscan")}
    assert short["bcast"] == short["reduce"] == short["gather"] == "binomial"
    assert short["allgather"] == ("recursive_doubling" if P & (P - 1) == 0 else "bruck")
    for op, alg in short.items():
        assert default_algorithm(op, P, None) == alg
    assert default_algorithm("alltoall", P, None) == "pairwise"
    assert default_algorithm("alltoallv", P, None) == "pairwise"
    assert default_algorithm("gatherv", P, None) == "linear"


def test_unknown_op_lists_valid_ops():
    """An unknown op raises an error listing the valid ops."""
    with pytest.raises(CollectiveSpecError, match="allreduce"):
        canonical_op("allreduc")


def test_bad_arguments():
    """Non-positive process counts and negative sizes are refused."""
    with pytest.raises(CollectiveSpecError, match="nprocs"):
        Analytic().time("bcast", 0, 8, hockney)
    with pytest.raises(CollectiveSpecError, match="nbytes"):
        Analytic().time("bcast", 4, -1, hockney)


# -- default selection (MPICH thresholds) --------------------------------------------------

@pytest.mark.parametrize("op, nprocs, nbytes, expected", [
    ("bcast", 64, 12287, "binomial"),
    ("bcast", 4, 1 << 20, "binomial"),                   # P < 8
    ("bcast", 64, 12288, "scatter_doubling_allgather"),
    ("bcast", 48, 12288, "scatter_ring_allgather"),      # medium, not a power of two
    ("bcast", 64, 524288, "scatter_ring_allgather"),
    ("allreduce", 64, 2048, "recursive_doubling"),
    ("allreduce", 64, 2049, "rabenseifner"),
    ("allreduce", 4096, 3000, "recursive_doubling"),     # fewer bytes than pof2
    ("reduce", 64, 2048, "binomial"),
    ("reduce", 64, 2049, "rabenseifner"),
    ("allgather", 8, 524287, "recursive_doubling"),
    ("allgather", 6, 81919, "bruck"),
    ("allgather", 6, 81920, "ring"),
    ("allgather", 8, 524288, "ring"),
    ("alltoall", 8, 2048, "bruck"),                      # 256 B per destination
    ("alltoall", 8, 2056, "pairwise"),                   # 257 B per destination
    ("alltoall", 4, 16, "pairwise"),                     # P < 8
    ("reduce_scatter", 8, 524287, "recursive_halving"),
    ("reduce_scatter", 8, 524288, "pairwise"),
    ("barrier", 7, 0, "dissemination"),
    ("gather", 7, 70, "binomial"),
    ("scatter", 7, 70, "binomial"),
    ("scan", 7, 8, "recursive_doubling"),
    ("exscan", 7, 8, "recursive_doubling"),
])
def test_default_algorithm(op, nprocs, nbytes, expected):
    """The default algorithm follows MPICH's size thresholds."""
    assert default_algorithm(op, nprocs, nbytes) == expected


def test_analytic_default_uses_selection():
    """Without overrides the analytic model costs MPICH's default algorithm."""
    # allreduce 1000 B on 8 ranks -> recursive doubling: 3*(1e-6 + 1e-6) = 6e-6
    assert Analytic().time("allreduce", 8, 1000, hockney) == pytest.approx(6e-6, rel=1e-12)
    # 8000 B on 8 ranks -> Rabenseifner: 20e-6 (see test_rabenseifner_allreduce)
    assert Analytic().time("allreduce", 8, 8000, hockney) == pytest.approx(20e-6, rel=1e-12)


# -- clog (MILC paper) ---------------------------------------------------------------------

def test_clog_formula():
    """clog charges c + d*log2 P whatever the size."""
    model = build_collective_model("clog:c=1e-6,d=2e-6")
    # P=8: 1e-6 + 2e-6*3 = 7e-6
    assert model.time("allreduce", 8, 16) == pytest.approx(7e-6, rel=1e-12)
    assert model.time("bcast", 8, 1 << 20) == pytest.approx(7e-6, rel=1e-12)
    assert model.time("allreduce", 1, 16) == pytest.approx(1e-6, rel=1e-12)   # log2 1 = 0


def test_clog_per_op_override():
    """OP.c / OP.d override the global parameters for that op only."""
    model = build_collective_model("clog:c=1e-6,d=2e-6,allreduce.c=0,allreduce.d=3.65e-6")
    # allreduce P=1024: 0 + 3.65e-6*10 = 36.5e-6; bcast keeps 1e-6 + 2e-6*10 = 21e-6
    assert model.time("allreduce", 1024, 16) == pytest.approx(36.5e-6, rel=1e-12)
    assert model.time("bcast", 1024, 16) == pytest.approx(21e-6, rel=1e-12)


def test_clog_missing_op_names_it():
    """An op with no c or d raises an error naming the op."""
    model = build_collective_model("clog:allreduce.c=0,allreduce.d=3.65e-6")
    with pytest.raises(CollectiveSpecError, match="'bcast'"):
        model.time("bcast", 8, 16)
    with pytest.raises(CollectiveSpecError, match="no d for op 'barrier'"):
        CLog(c=1e-6).time("barrier", 8, 0)


def test_clog_machine_presets():
    """machine=xt5 sets allreduce to the MILC paper's a=238 us, b=51 us."""
    model = build_collective_model("clog:machine=xt5")
    # P=64: 238e-6 + 51e-6*6 = 544e-6
    assert model.time("allreduce", 64, 16) == pytest.approx(544e-6, rel=1e-12)
    # POWER5+: c=0, d=3.65 us; P=256: 8*3.65e-6 = 29.2e-6
    assert CLog(machine="power5").time("allreduce", 256, 16) == pytest.approx(29.2e-6, rel=1e-12)
    with pytest.raises(CollectiveSpecError, match="xe6"):
        CLog(machine="bgq")


def test_clog_rejects_bad_values():
    """Negative or non-numeric c/d and unknown keys are refused."""
    with pytest.raises(CollectiveSpecError, match="c must be"):
        CLog(c=-1.0, d=1.0)
    with pytest.raises(CollectiveSpecError, match="number"):
        build_collective_model("clog:c=fast,d=1")
    with pytest.raises(CollectiveSpecError, match="unknown parameter"):
        build_collective_model("clog:e=1")


# -- tables (BSIM paper, PRIMEQUEST) --------------------------------------------------------

GRID = """\
op,nprocs,nbytes,seconds
# a 2 x 2 grid for allreduce
allreduce,2,0,1e-6
allreduce,2,1000,3e-6
allreduce,4,0,2e-6
allreduce,4,1000,6e-6
barrier,2,0,1e-6
barrier,4,0,3e-6
"""


@pytest.fixture
def grid(tmp_path):
    path = tmp_path / "coll.csv"
    path.write_text(GRID)
    return path


def test_table_at_points(grid):
    """At a measured point the table returns the measurement."""
    model = Table(grid)
    assert model.time("allreduce", 2, 0) == 1e-6
    assert model.time("allreduce", 2, 1000) == 3e-6
    assert model.time("allreduce", 4, 0) == 2e-6
    assert model.time("allreduce", 4, 1000) == 6e-6


def test_table_between_points(grid):
    """Between points the table interpolates linearly in size, then in P (bilinear)."""
    model = Table(grid)
    # size midpoint at P=2: (1e-6 + 3e-6)/2 = 2e-6; at P=4: (2e-6 + 6e-6)/2 = 4e-6
    assert model.time("allreduce", 2, 500) == pytest.approx(2e-6, rel=1e-12)
    assert model.time("allreduce", 4, 500) == pytest.approx(4e-6, rel=1e-12)
    # P midpoint at size 0: (1e-6 + 2e-6)/2 = 1.5e-6
    assert model.time("allreduce", 3, 0) == pytest.approx(1.5e-6, rel=1e-12)
    # centre: (2e-6 + 4e-6)/2 = 3e-6; (3, 250): row2 1.5e-6, row4 3e-6 -> 2.25e-6
    assert model.time("allreduce", 3, 500) == pytest.approx(3e-6, rel=1e-12)
    assert model.time("allreduce", 3, 250) == pytest.approx(2.25e-6, rel=1e-12)


def test_table_barrier_ignores_size(grid):
    """Barrier rows may have a single point; its size is ignored."""
    model = Table(grid)
    # P=3: (1e-6 + 3e-6)/2 = 2e-6 at any size
    assert model.time("barrier", 3, 0) == pytest.approx(2e-6, rel=1e-12)
    assert model.time("barrier", 3, 123) == pytest.approx(2e-6, rel=1e-12)


def test_table_extrapolates_by_default(grid):
    """Beyond the grid the end segments are extended linearly (floored at 0)."""
    model = Table(grid)
    # P=2, 2000 B: slope 2e-6/1000 B -> 1e-6 + 2000*2e-9 = 5e-6
    assert model.time("allreduce", 2, 2000) == pytest.approx(5e-6, rel=1e-12)
    # P=8, 0 B: slope 0.5e-6 per rank -> 1e-6 + 6*0.5e-6 = 4e-6
    assert model.time("allreduce", 8, 0) == pytest.approx(4e-6, rel=1e-12)
    # P=1, 0 B: 1e-6 - 0.5e-6 = 0.5e-6
    assert model.time("allreduce", 1, 0) == pytest.approx(0.5e-6, rel=1e-12)


def test_table_extrapolation_floored_at_zero():
    """A falling extrapolation never returns a negative time."""
    model = Table(points=[("bcast", 2, 0, 3e-6), ("bcast", 2, 10, 3e-6),
                          ("bcast", 4, 0, 1e-6), ("bcast", 4, 10, 1e-6)])
    # P=8: 3e-6 - 6*1e-6 = -3e-6 -> 0
    assert model.time("bcast", 8, 0) == 0.0
    # P=1: 3e-6 + 1e-6 = 4e-6
    assert model.time("bcast", 1, 0) == pytest.approx(4e-6, rel=1e-12)


def test_table_clamp(grid):
    """outside=clamp returns the nearest edge value beyond the grid."""
    model = build_collective_model(f"table:path={grid},outside=clamp")
    assert model.time("allreduce", 2, 2000) == 3e-6
    assert model.time("allreduce", 8, 0) == 2e-6
    assert model.time("allreduce", 1, 0) == 1e-6
    assert model.time("allreduce", 8, 5000) == 6e-6
    assert model.time("allreduce", 3, 500) == pytest.approx(3e-6, rel=1e-12)   # inside


def test_table_outside_error(grid):
    """outside=error refuses queries beyond the grid."""
    model = Table(grid, outside="error")
    with pytest.raises(CollectiveSpecError, match="outside measured range"):
        model.time("allreduce", 8, 0)
    with pytest.raises(CollectiveSpecError, match="outside measured range"):
        model.time("allreduce", 2, 2000)


def test_table_rows_with_different_sizes():
    """Rows need not share sizes: each row is interpolated in size first."""
    model = Table(points=[("bcast", 2, 0, 1e-6), ("bcast", 2, 1000, 2e-6),
                          ("bcast", 4, 0, 2e-6), ("bcast", 4, 2000, 6e-6)])
    # (3, 1000): row 2 -> 2e-6, row 4 -> 2e-6 + 0.5*4e-6 = 4e-6, halfway -> 3e-6
    assert model.time("bcast", 3, 1000) == pytest.approx(3e-6, rel=1e-12)


def test_table_v_variant_and_case(tmp_path):
    """Op names in the file and in queries are case-insensitive; v-variants map to plain ops."""
    path = tmp_path / "c.csv"
    path.write_text("seconds,nbytes,nprocs,op\n1e-6,0,2,Allgatherv\n2e-6,8,2,allgatherv\n"
                    "2e-6,0,4,ALLGATHER\n4e-6,8,4,allgather\n")
    model = Table(path)
    # (3, 4): row 2 -> 1.5e-6, row 4 -> 3e-6 -> 2.25e-6
    assert model.time("Allgatherv", 3, 4) == pytest.approx(2.25e-6, rel=1e-12)


def test_table_missing_op(grid):
    """Querying an op not in the table names the ops it has."""
    with pytest.raises(CollectiveSpecError, match="no measurements for bcast; it has allreduce"):
        Table(grid).time("bcast", 2, 0)


@pytest.mark.parametrize("text, match", [
    ("op,nprocs,nbytes\nbcast,2,0\n", "missing column"),
    ("op,nprocs,nbytes,seconds\nbcast,2,0,1e-6\nbcast,2,0,2e-6\n", "duplicate"),
    ("op,nprocs,nbytes,seconds\nbcast,2,0,2e-6\nbcast,2,8,1e-6\n"
     "bcast,4,0,2e-6\nbcast,4,8,3e-6\n", "non-monotone"),
    ("op,nprocs,nbytes,seconds\nbcast,2,0,1e-6\nbcast,2,8,2e-6\n", "2 process counts"),
    ("op,nprocs,nbytes,seconds\nbcast,2,0,1e-6\nbcast,4,0,2e-6\nbcast,4,8,3e-6\n", "2 sizes"),
    ("op,nprocs,nbytes,seconds\nbcast,2,0,-1e-6\n", "seconds must be"),
    ("op,nprocs,nbytes,seconds\nbcast,2.5,0,1e-6\n", "integer"),
    ("op,nprocs,nbytes,seconds\nbcast,two,0,1e-6\n", "numbers"),
    ("op,nprocs,nbytes,seconds\nbcst,2,0,1e-6\n", "unknown collective op"),
    ("op,nprocs,nbytes,seconds\n", "no points"),
    ("", "empty"),
])
def test_table_file_errors(tmp_path, text, match):
    """Malformed tables raise errors naming the problem."""
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(CollectiveSpecError, match=match):
        Table(path)


def test_table_monotone_false_allows_dips(tmp_path):
    """monotone=false accepts a time that falls with size (e.g. a protocol switch)."""
    path = tmp_path / "dip.csv"
    path.write_text("op,nprocs,nbytes,seconds\nbcast,2,0,2e-6\nbcast,2,8,1e-6\n"
                    "bcast,4,0,2e-6\nbcast,4,8,3e-6\n")
    model = build_collective_model(f"table:path={path},monotone=false")
    # (2, 4): (2e-6 + 1e-6)/2
    assert model.time("bcast", 2, 4) == pytest.approx(1.5e-6, rel=1e-12)


def test_table_error_names_file_and_line(tmp_path):
    """Errors in a file say which line."""
    path = tmp_path / "bad.csv"
    path.write_text("op,nprocs,nbytes,seconds\nbcast,2,0,1e-6\nbcast,2,0,1e-6\n")
    with pytest.raises(CollectiveSpecError, match=r"bad\.csv:3: duplicate.*bad\.csv:2"):
        Table(path)


def test_table_unreadable_file(tmp_path):
    """A missing file is reported by name."""
    with pytest.raises(CollectiveSpecError, match="cannot read"):
        Table(tmp_path / "nope.csv")


# -- spec strings ------------------------------------------------------------------------

def test_build_analytic_specs():
    """analytic and analytic:OP=ALG build, and the spec round-trips."""
    assert isinstance(build_collective_model("analytic"), Analytic)
    model = build_collective_model("analytic:allreduce=ring,bcast=linear")
    assert model.algorithm("allreduce", 8, 8) == "ring"
    assert model.algorithm("bcast", 8, 8) == "linear"
    assert model.algorithm("reduce", 8, 8) == "binomial"
    assert build_collective_model(model.spec()).spec() == model.spec()


def test_build_spec_errors_list_valid_options():
    """Spec errors list the valid model names, ops or algorithms."""
    with pytest.raises(CollectiveSpecError, match="analytic, clog, table"):
        build_collective_model("tabel:path=x.csv")
    with pytest.raises(CollectiveSpecError, match="recursive_doubling, rabenseifner, ring"):
        build_collective_model("analytic:allreduce=butterfly")
    with pytest.raises(CollectiveSpecError, match="valid: barrier, bcast"):
        build_collective_model("analytic:allreduse=ring")
    with pytest.raises(CollectiveSpecError, match="KEY=VALUE"):
        build_collective_model("analytic:ring")
    with pytest.raises(CollectiveSpecError, match="missing path"):
        build_collective_model("table:outside=clamp")
    with pytest.raises(CollectiveSpecError, match="unknown parameter"):
        build_collective_model("table:path=x.csv,interp=log")
    with pytest.raises(CollectiveSpecError, match="extrapolate, clamp, error"):
        Table(points=[], outside="nearest")


def test_build_spec_passthrough_and_round_trip(grid):
    """A model passes through unchanged; clog and table specs rebuild equal models."""
    model = CLog(c=1e-6, d=2e-6)
    assert build_collective_model(model) is model
    clog = build_collective_model("clog:c=1e-06,d=2e-06,allreduce.d=3e-06,machine=xe6")
    again = build_collective_model(clog.spec())
    assert again.coefficients("allreduce") == clog.coefficients("allreduce") == (21.5e-6, 3e-6)
    table = build_collective_model(f"table:path={grid},outside=clamp")
    assert build_collective_model(table.spec()).time("allreduce", 8, 0) == 2e-6


def test_describe_lists_models():
    """describe_collective_models names every registered model."""
    text = describe_collective_models()
    for name in ("analytic", "clog", "table"):
        assert f"{name}:" in text


# -- analytic costs on a topology follow the algorithm's partners ------------------------

def _one_collective(op, n):
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        P = comm.size
        buf = bsim.Buffer
        if op == "allreduce":
            comm.Allreduce(buf(n), buf(n))
        elif op == "bcast":
            comm.Bcast(buf(n), root=0)
        elif op == "allgather":
            comm.Allgather(buf(n // P), buf(n))
        elif op == "alltoall":
            comm.Alltoall(buf(n), buf(n))
        elif op == "barrier":
            comm.Barrier()
        elif op == "reduce_scatter":
            comm.Reduce_scatter_block(buf(n), buf(n // P))
    return main


def test_analytic_allreduce_on_a_torus_pays_the_partners_hops():
    """Recursive doubling on a 32x32 torus, block mapping: step k's partner is 2^k away.

    In x the partners are 1, 2, 4, 8, 16 hops away, then the same in y: 62 hops
    in all over 10 steps, so ``T = 10 (latency + s/B) + 62 hop_latency``
    (hand derivation).  The worst sampled pair at every step would pay 160.
    """
    lat, hop, bw, s = 1e-6, 1e-7, 1e9, 8
    net = f"torus:dims=32x32,link_bandwidth={bw},latency={lat},hop_latency={hop}"
    res = bsim.simulate(_one_collective("allreduce", s), ranks=1024, network=net, protocol="bsim")
    assert res.elapsed == pytest.approx(10 * (lat + s / bw) + 62 * hop, rel=1e-12)


@pytest.mark.parametrize("net,ranks", [
    ("torus:dims=4x4,link_bandwidth=1e9", 16),
    ("torus:dims=8x4,link_bandwidth=1e9,cores=2", 64),
    ("fattree:k=4,n=2,link_bandwidth=1e9", 16),
    ("bluewaters:supernodes=2", 64),
])
@pytest.mark.parametrize("op", ["allreduce", "bcast", "allgather", "alltoall", "barrier",
                                "reduce_scatter"])
@pytest.mark.parametrize("n", [64, 1 << 16, 1 << 20])
def test_analytic_on_a_topology_matches_the_expanded_algorithm(net, ranks, op, n):
    """Without contention the analytic time is the engine's message-by-message run of the
    same algorithm (``--collectives algorithmic``) to 0.5%: one formula, the real partners."""
    main = _one_collective(op, n)
    analytic = bsim.simulate(main, ranks=ranks, network=net, protocol="bsim").elapsed
    expanded = bsim.simulate(main, ranks=ranks, network=net, collectives="algorithmic",
                             protocol="bsim").elapsed
    assert analytic == pytest.approx(expanded, rel=5e-3)


def test_table_warns_once_when_used_far_outside_what_it_measured(tmp_path):
    """Measured on 2 and 4 ranks, 8..1024 bytes: 4096 ranks or 1 MiB is a straight line
    stretched far beyond the data (the calibration issue: a 2-rank table at 4,096 ranks);
    within 2x it is quiet; each operation warns once."""
    import warnings as w

    from netmodels.collective_costs import ExtrapolationWarning, Table
    path = tmp_path / "coll.csv"
    path.write_text("op,nprocs,nbytes,seconds\n" + "".join(
        f"allreduce,{p},{n},{1e-6 * p + 1e-9 * n}\n" for p in (2, 4) for n in (8, 1024)))
    table = Table(path)
    with w.catch_warnings():
        w.simplefilter("error")
        table.time("allreduce", 8, 2048)              # 2x beyond both: quiet
    with pytest.warns(ExtrapolationWarning, match=r"allreduce at 4096 ranks \(measured 2..4\)"):
        table.time("allreduce", 4096, 16)
    with w.catch_warnings():
        w.simplefilter("error")
        table.time("allreduce", 8192, 16)             # already said for this operation
    with pytest.warns(ExtrapolationWarning, match=r"1.04858e\+06 bytes \(measured 8..1024\)"):
        table.time("allreduce", 4, 1 << 20)
    clamp = Table(path, outside="clamp")
    with w.catch_warnings():
        w.simplefilter("error")
        clamp.time("allreduce", 4096, 16)             # the user chose to clamp: no warning


# -- the formula's messages are the run's messages: the root, the protocol, no noise ----

def _bcast(n, root):
    def main():
        from mpi4py import MPI
        MPI.COMM_WORLD.Bcast(bsim.Buffer(n), root=root)
    return main


@pytest.mark.parametrize("collectives", ["analytic", "algorithmic"])
def test_a_rooted_formula_follows_its_root_on_a_topology(collectives):
    """Binomial bcast of 1 KiB on a 2-ary 3-tree (8 hosts; a message crossing 1, 3 or 5
    switches costs ``c1 < c3 < c5``, ``latency + switches * hop_latency + s/B``).

    Root 0 sends to 4 (c5), 2 (c3), 1 (c1) in turn and the deepest chain is
    ``c5 + c3 + c1``.  From root 1 the partners are relative ranks: 1 -> 5 (c5), 1 -> 3,
    5 -> 7 (c3), then 3 -> 4 and 7 -> 0 cross the top (c5): ``2 c5 + c3``
    (hand derivation; the formula priced root 0's partners for every root before)."""
    lat, hop, s, bw = 1e-6, 1e-7, 1024, 1e10
    c1, c3, c5 = (lat + k * hop + s / bw for k in (1, 3, 5))
    net = f"fattree:k=2,n=3,cores=1,latency={lat},hop_latency={hop},link_bandwidth={bw}"
    t0 = bsim.simulate(_bcast(s, 0), 8, network=net, collectives=collectives,
                       protocol="bsim").elapsed
    t1 = bsim.simulate(_bcast(s, 1), 8, network=net, collectives=collectives,
                       protocol="bsim").elapsed
    assert t0 == pytest.approx(c5 + c3 + c1, rel=1e-12)
    assert t1 == pytest.approx(2 * c5 + c3, rel=1e-12)


@pytest.mark.parametrize("protocol", ["bsim:envelope=10000", "loggp:envelope=10000"])
def test_a_formula_pays_the_protocols_envelope(protocol):
    """Dissemination barrier on 8 ranks: 3 rounds of one envelope-only message, each
    ``latency + envelope / B`` = 1 us + 10 us (Hockney; the envelope is on the wire)."""
    def main():
        from mpi4py import MPI
        MPI.COMM_WORLD.Barrier()
    res = bsim.simulate(main, 8, network="hockney:latency=1e-6,bandwidth=1e9",
                        protocol=protocol)
    assert res.elapsed == pytest.approx(3 * (1e-6 + 10000 / 1e9), rel=1e-12)


@pytest.mark.parametrize("protocol,handshake", [("loggp", 2), ("bsim", 0),
                                                ("loggp:data=match", 0)])
def test_a_formula_pays_the_rendezvous_handshake(protocol, handshake):
    """A 2-rank bcast of 1 MiB is one message: LogGP's ``2o + L + (s-1)G``, plus under the
    loggp protocol above its eager limit (64 KiB) a request-to-send and a clear-to-send,
    ``L`` each; the ``bsim`` protocol and ``data=match`` have no handshake."""
    L, o, G, s = 5e-6, 1e-5, 1e-9, 1 << 20
    res = bsim.simulate(_bcast(s, 0), 2, network=f"loggp:L={L},o={o},g=0,G={G}",
                        protocol=protocol)
    assert res.elapsed == pytest.approx(2 * o + L + (s - 1) * G + handshake * L, rel=1e-12)


def test_a_formula_draws_no_network_noise():
    """``net:`` noise delays the k-th message of a pair by ``delay(src, dst, k)``; an analytic
    collective sends no message, so rank 0's first message to rank 1 after it is delayed as
    the first one: the same receive time as without the collective."""
    from bsim.engine.network_noise import NoisyNetwork
    from netmodels.base import build_network

    def main(collective):
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        if collective:
            comm.Allreduce(bsim.Buffer(8), bsim.Buffer(8))
        t = MPI.Wtime()
        if comm.rank == 0:
            comm.Send(bsim.Buffer(8), dest=1)
        elif comm.rank == 1:
            comm.Recv(bsim.Buffer(8), source=0)
        return MPI.Wtime() - t

    def took(collective):
        net = NoisyNetwork(build_network("hockney:latency=1e-6,bandwidth=1e9"), mean=1e-5,
                           seed=1)
        return bsim.simulate(main, 4, network=net, args=(collective,), protocol="bsim").returns[1]
    quiet = 1e-6 + 8 / 1e9
    assert took(False) > quiet              # the draw delays this message
    assert took(True) == took(False)


def test_an_unknown_algorithm_of_an_algorithmic_source_fails_at_once():
    """``algorithmic:allreduce=bogus`` was accepted, and failed only inside the first rank
    that called allreduce (or never, without one); it is refused when the source is built,
    as ``analytic:allreduce=bogus`` is."""
    from bsim.engine.collective_costs import CollectiveCosts
    for spec in ("algorithmic:allreduce=bogus", "analytic:allreduce=bogus"):
        with pytest.raises(ValueError, match="unknown allreduce algorithm 'bogus'; valid: "):
            CollectiveCosts(spec)
    assert CollectiveCosts("algorithmic:allreduce=ring").algorithm("allreduce", 8, 8) == "ring"


def test_translated_groups_on_a_torus_have_one_shape_and_the_same_costs():
    """A torus's costs depend on coordinate differences modulo the rings (and on sharing a
    node), so a group moved by a translation has the same shape (``group_shape``) and the
    same cost between corresponding members; groups that are not translates differ."""
    import random

    from netmodels.base import build_network
    net = build_network("torus:dims=4x4x2,cores=2,link_bandwidth=1e9")
    net.prepare(64)
    rng = random.Random(7)

    def translate(rank, shift):
        node, core = divmod(rank, 2)
        c = net.coords(node)
        return 2 * net.node_at(tuple(x + s for x, s in zip(c, shift))) + core

    for _ in range(20):
        group = rng.sample(range(64), 6)
        shift = (rng.randrange(4), rng.randrange(4), rng.randrange(2))
        moved = [translate(r, shift) for r in group]
        assert net.group_shape(group) == net.group_shape(moved)
        for a, b in zip(group, group[1:]):
            ma, mb = translate(a, shift), translate(b, shift)
            assert net.cost(a, b, 4096) == net.cost(ma, mb, 4096)
    row, column = [0, 2, 4, 6], [0, 8, 16, 24]   # 4 nodes along x, 4 along y: not translates
    assert net.group_shape(row) != net.group_shape(column)


def test_sharing_a_price_between_translated_communicators_changes_no_prediction(monkeypatch):
    """Rows of an 8x4 torus are translates: with the shape key (one price for all rows) the
    per-rank times of rooted and unrooted collectives equal those priced per communicator
    (``SHAPE_LIMIT = 0``), bit for bit; columns, of another shape, are priced apart."""
    import bsim.engine.collective_costs as cc

    def main():
        from mpi4py import MPI
        world = MPI.COMM_WORLD
        row = world.Split(world.rank // 8, world.rank)
        col = world.Split(world.rank % 8, world.rank)
        # two groups of 4 that are not translates: x = 0..3 of row 0 (3 -> 0 is 3 hops)
        # and the column x = 4 (its y ring wraps: 3 -> 0 is 1 hop)
        r = world.rank
        four = world.Split(0 if r < 4 else 1 if r % 8 == 4 else MPI.UNDEFINED, r)
        for k in range(8):
            bsim.add_time(1e-6 * (world.rank % 3))
            row.Bcast(bsim.Buffer(1 << (10 + k)), root=k)
            col.Reduce(bsim.Buffer(64), bsim.Buffer(64), root=k % 4)
            row.Allreduce(bsim.Buffer(8 << k), bsim.Buffer(8 << k))
            if four != MPI.COMM_NULL:
                four.Bcast(bsim.Buffer(1024), root=1)

    net = "torus:dims=8x4,cores=1,link_bandwidth=1e9,hop_latency=1e-7"
    shared = bsim.simulate(main, 32, network=net, protocol="bsim")
    monkeypatch.setattr(cc, "SHAPE_LIMIT", 0)
    apart = bsim.simulate(main, 32, network=net, protocol="bsim")
    assert shared.finish.tolist() == apart.finish.tolist()
    assert shared.wait.tolist() == apart.wait.tolist()


def test_groups_of_different_shapes_keep_their_own_prices():
    """Two groups of 4 on an 8x4 torus that are not translates (x = 0..3 of row 0, whose
    3 -> 0 is 3 hops, and the column x = 4, whose y ring wraps: 1 hop) broadcast the same
    size from the same root in one run: each member's finish equals the one it has when
    its group broadcasts alone, so neither group is priced with the other's shape."""
    def run(which):
        def main():
            from mpi4py import MPI
            world = MPI.COMM_WORLD
            r = world.rank
            color = 0 if r < 4 else 1 if r % 8 == 4 else MPI.UNDEFINED
            four = world.Split(color, r)
            if four != MPI.COMM_NULL and color in which:
                four.Bcast(bsim.Buffer(1 << 20), root=1)
        return bsim.simulate(main, 32, network="torus:dims=8x4,cores=1,link_bandwidth=1e9,"
                                                "hop_latency=1e-6", protocol="bsim").finish
    both, row, column = run((0, 1)), run((0,)), run((1,))
    assert both[:4].tolist() == row[:4].tolist()
    assert both[[4, 12, 20, 28]].tolist() == column[[4, 12, 20, 28]].tolist()
    assert row[:4].tolist() != column[[4, 12, 20, 28]].tolist()   # the shapes' prices differ
