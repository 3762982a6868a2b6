"""Differential check against SimGrid's SMPI: the same skeleton, two simulators.

The C programs in ``bsim/validation/c`` run under ``smpirun`` and their
Python twins under bsim, on star, torus and fat-tree platforms built from the
same parameters (``bsim/validation/smpi.py``), bsim with the setting that
models SMPI's physics (``--protocol
loggp:injection=parallel,data=match,envelope=16,eager_limit=65535
--contention fluid:share=latency,start=after_latency``).  SMPI is the
independent truth here.  Targets (the issue's): 0.5% on star and torus, 1% on
fat-tree, 16 to 1,024 ranks.  Skipped when SimGrid is missing unless
``BSIM_REQUIRE_SMPI=1`` (CI sets it).
"""

from __future__ import annotations

import pytest
from conftest import require_smpi

from bsim.validation.smpi import Platform, run_bsim, run_smpi

require_smpi()

PLATFORMS = {   # name: (platform, ranks)
    "star16": (Platform("star", 16), 16),
    "torus16": (Platform("torus", 16, dims=(4, 4)), 16),
    "fattree16": (Platform("fattree", 16, dims=(4, 2)), 16),
    "star64": (Platform("star", 64, lat=5e-7, bw=2e9), 64),
    "torus64": (Platform("torus", 64, dims=(4, 4, 4), lat=2e-7, bw=5e9), 64),
    "fattree64": (Platform("fattree", 64, dims=(2, 6), lat=2e-7, bw=5e9), 64),
}
LARGE = {
    "torus256": (Platform("torus", 256, dims=(8, 8, 4), lat=2e-7, bw=5e9), 256),
    "fattree256": (Platform("fattree", 256, dims=(4, 4), lat=2e-7, bw=5e9), 256),
    "star1024": (Platform("star", 1024, lat=5e-7, bw=2e9), 1024),
    "torus1024": (Platform("torus", 1024, dims=(16, 8, 8), lat=2e-7, bw=5e9), 1024),
    "fattree1024": (Platform("fattree", 1024, dims=(4, 5), lat=2e-7, bw=5e9), 1024),
}
CASES = [   # program, bytes, iterations, compute seconds: eager and synchronous sizes
    ("pingpong", 1000, 5, 0.0), ("pingpong", 200000, 3, 0.0),
    ("ring", 1000, 5, 1e-5), ("ring", 100000, 4, 1e-4),
    ("halo2d", 8192, 4, 2e-5), ("halo2d", 50000, 4, 1e-4), ("halo2d", 200000, 3, 1e-5),
    ("sweep", 1000, 2, 1e-5), ("sweep", 50000, 2, 1e-5), ("sweep", 200000, 1, 1e-5),
    # SMPI's detached-send threshold: 65,536 bytes is synchronous (size < 65536 is detached)
    ("sweep", 65536, 1, 1e-5),
]
LARGE_CASES = [("halo2d", 200000, 2, 1e-5), ("sweep", 50000, 1, 1e-5)]
# each allreduce algorithm both implement the same way: (SMPI settings, bsim collectives);
# sizes are multiples of 8 * ranks (SMPI's lr falls back to redbcast below one double each)
ALLREDUCE = {
    "recursive_doubling": ("smpi/allreduce:rdb",),
    "ring": ("smpi/allreduce:lr",),
    "rabenseifner": ("smpi/allreduce:rab_rdb",),
    "reduce_bcast": ("smpi/allreduce:redbcast", "smpi/reduce:binomial",
                     "smpi/bcast:binomial_tree"),
}


def tolerance(platform: Platform) -> float:
    return 0.01 if platform.kind == "fattree" else 0.005


def check(platform: Platform, nranks: int, case: tuple, **kw) -> None:
    smpi = run_smpi(case[0], platform, nranks, *case[1:], cfg=kw.pop("cfg", ()))
    ours = run_bsim(case[0], platform, nranks, *case[1:], **kw)
    assert ours.time == pytest.approx(smpi.time, rel=tolerance(platform)), (smpi.time, ours.time)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_bsim_agrees_with_smpi(platform, case):
    check(*PLATFORMS[platform], case)


@pytest.mark.parametrize("case", LARGE_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
@pytest.mark.parametrize("platform", sorted(LARGE))
def test_bsim_agrees_with_smpi_at_256_and_1024_ranks(platform, case):
    check(*LARGE[platform], case)


@pytest.mark.parametrize("size", [8 * 64, 8 * 64 * 2048])
@pytest.mark.parametrize("algorithm", sorted(ALLREDUCE))
@pytest.mark.parametrize("platform", ["star16", "torus64", "fattree64"])
def test_each_allreduce_algorithm_agrees_with_smpi(platform, algorithm, size):
    plat, nranks = PLATFORMS[platform]
    check(plat, nranks, ("allreduce", size, 3, 1e-5), cfg=ALLREDUCE[algorithm],
          collectives=f"algorithmic:allreduce={algorithm}")


def test_the_paper_rules_differ_from_smpi_where_they_should():
    """The BSIM paper's receiver-side rule does not overlap compute with transfers: on the
    ring it is slower than SMPI by about the transfer time per iteration -- a different
    model, not an error (docs/validation.md)."""
    plat, nranks = PLATFORMS["star16"]
    smpi = run_smpi("ring", plat, nranks, 100000, 4, 1e-4)
    paper = run_bsim("ring", plat, nranks, 100000, 4, 1e-4, protocol="bsim")
    transfer = 2 * plat.lat + 100000 / plat.bw
    assert paper.time == pytest.approx(smpi.time + 4 * transfer - 4 * 16 / plat.bw, rel=0.01)


def test_equal_shares_differ_from_smpi_on_a_torus_by_the_weighting():
    """With plain max-min (``fluid``) the 256-rank halo on an 8x8x4 torus is faster than
    SMPI, whose CM02 gives longer routes less bandwidth; the weighting closes the gap."""
    plat, nranks = LARGE["torus256"]
    smpi = run_smpi("halo2d", plat, nranks, 200000, 2, 1e-5)
    equal = run_bsim("halo2d", plat, nranks, 200000, 2, 1e-5, contention="fluid")
    assert equal.time < smpi.time * 0.95
