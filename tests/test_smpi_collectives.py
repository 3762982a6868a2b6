"""Differential check of bsim's expanded collectives against SimGrid's SMPI.

``bsim/validation/c/collective.c`` (one collective, named by its fourth argument, after a
compute block; repeated) runs under ``smpirun --cfg=smpi/OP:NAME`` and its Python twin
(``programs.collective``) under bsim with ``collectives="algorithmic:OP=ALG"``, with the
setting that models SMPI's physics (``tests/test_smpi.py``, ``docs/validation.md``), on
a 16-rank star, a 4x4x4 torus and a 2-ary 6-tree.  Each pair below was read in both
sources and sends the same messages (partners, sizes, order, blocking) as the other;
where SMPI has no such algorithm the pair is left out (``docs/validation.md`` says how
they differ).  Targets as for the other programs: 0.5% on star and torus, 1% on fat-tree.
"""

from __future__ import annotations

import pytest
from conftest import require_smpi

from bsim.validation.smpi import Platform, run_bsim, run_smpi

require_smpi()

PLATFORMS = {   # name: (platform, ranks), as tests/test_smpi.py's allreduce cases
    "star16": (Platform("star", 16), 16),
    "torus64": (Platform("torus", 64, dims=(4, 4, 4), lat=2e-7, bw=5e9), 64),
    "fattree64": (Platform("fattree", 64, dims=(2, 6), lat=2e-7, bw=5e9), 64),
}
# (op, bsim algorithm): SMPI's algorithm doing the same messages in the same order
PAIRS = {
    ("bcast", "binomial"): "binomial_tree",
    ("bcast", "linear"): "flattree",
    ("bcast", "scatter_ring_allgather"): "scatter_LR_allgather",
    ("bcast", "scatter_doubling_allgather"): "scatter_rdb_allgather",
    ("reduce", "binomial"): "binomial",
    ("reduce", "linear"): "default",             # SMPI's ireduce: the root posts every receive
    ("reduce", "rabenseifner"): "scatter_gather",   # MPICH's
    ("gather", "binomial"): "ompi_binomial",     # in-order tree, nearest child first
    ("gather", "linear"): "default",             # SMPI's igather
    ("scatter", "linear"): "default",            # SMPI's iscatter
    ("allgather", "recursive_doubling"): "rdb",
    ("allgather", "bruck"): "bruck",
    ("allgather", "ring"): "NTSLR",              # SMPI's "ring" sends to rank+i at step i
    ("alltoall", "pairwise"): "ring",            # SMPI's "pair" is XOR-paired
    ("alltoall", "bruck"): "bruck",
    ("reduce_scatter", "pairwise"): "mpich_pair",
    ("reduce_scatter", "recursive_halving"): "ompi_basic_recursivehalving",
    ("barrier", "dissemination"): "ompi_bruck",
    ("barrier", "linear"): "ompi_basic_linear",
}
# an eager size and a large one: every message synchronous (above 64 KiB) but the few of
# the trees' last levels; multiples of 8 x 64 (doubles, blocks of 16 and 64 ranks)
SIZES = (512, 5 * 2**20)
ITERS, COMPUTE = 2, 1e-5
# known disagreements: (op, algorithm, platform, size) -> why (none at present; the
# recursive-halving reduce_scatter paired ranks at distance 1 first until 2026-11-27,
# MPICH's and SMPI's at P/2 first: -19.9% on the 4x4x4 torus at 5 MiB)
KNOWN: dict[tuple[str, str, str, int], str] = {}


def tolerance(platform: Platform) -> float:
    return 0.01 if platform.kind == "fattree" else 0.005


def _cases():
    for (op, alg), smpi_alg in PAIRS.items():
        for platform in PLATFORMS:
            for size in (0,) if op == "barrier" else SIZES:
                marks = ()
                reason = KNOWN.get((op, alg, platform, size))
                if reason is not None:
                    marks = (pytest.mark.xfail(strict=True, reason=reason),)
                yield pytest.param(op, alg, smpi_alg, platform, size, marks=marks,
                                   id=f"{op}-{alg}-{platform}-{size}")


@pytest.mark.parametrize("op, alg, smpi_alg, platform, size", list(_cases()))
def test_each_collective_algorithm_agrees_with_smpi(op, alg, smpi_alg, platform, size):
    plat, nranks = PLATFORMS[platform]
    smpi = run_smpi("collective", plat, nranks, size, ITERS, COMPUTE,
                    cfg=(f"smpi/{op}:{smpi_alg}",), extra=(op,))
    ours = run_bsim("collective", plat, nranks, size, ITERS, COMPUTE,
                    collectives=f"algorithmic:{op}={alg}", extra=(op,))
    assert ours.time == pytest.approx(smpi.time, rel=tolerance(plat)), (smpi.time, ours.time)


def test_bcast_at_smpis_first_synchronous_size():
    """A 65,536-byte binomial bcast on 4 ranks: SMPI's root sends one message after the
    other (synchronous from 65,536 bytes), so must bsim (``eager_limit=65535``)."""
    plat = Platform("star", 4)
    smpi = run_smpi("collective", plat, 4, 65536, 1, 0.0, cfg=("smpi/bcast:binomial_tree",),
                    extra=("bcast",))
    ours = run_bsim("collective", plat, 4, 65536, 1, 0.0, collectives="algorithmic:bcast=binomial",
                    extra=("bcast",))
    assert ours.time == pytest.approx(smpi.time, rel=1e-9)
    assert smpi.time == pytest.approx(2 * (2 * plat.lat + (65536 + 16) / plat.bw), rel=1e-9)


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_smpis_default_barrier_is_the_linear_one(platform):
    """SMPI run with no ``smpi/barrier`` setting takes OMPI's basic linear barrier: bsim's
    ``algorithmic:barrier=linear`` gives its time; bsim's own barrier (dissemination, under
    ``algorithmic`` as under the analytic formula) is SMPI's ``ompi_bruck``, slower on these
    platforms (``docs/validation.md``, "The barrier")."""
    plat, nranks = PLATFORMS[platform]
    smpi = run_smpi("collective", plat, nranks, 0, ITERS, COMPUTE, extra=("barrier",))
    linear = run_bsim("collective", plat, nranks, 0, ITERS, COMPUTE,
                      collectives="algorithmic:barrier=linear", extra=("barrier",))
    ours = run_bsim("collective", plat, nranks, 0, ITERS, COMPUTE, collectives="algorithmic",
                    extra=("barrier",))
    assert linear.time == pytest.approx(smpi.time, rel=1e-9)
    assert ours.time > smpi.time * 1.01
