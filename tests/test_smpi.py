"""Differential check against SimGrid's SMPI: the same skeleton, two simulators.

The C programs in ``bsim/validation/c`` run under ``smpirun`` and their
Python twins under bsim, on star and torus platforms built from the same
parameters (``bsim/validation/smpi.py``), bsim with the setting that models
SMPI's physics (``--protocol loggp:injection=parallel,data=match,envelope=16
--contention fluid``).  SMPI is the independent truth here.  Skipped when
SimGrid is missing unless ``BSIM_REQUIRE_SMPI=1`` (CI sets it).
"""

from __future__ import annotations

import os

import pytest

from bsim.validation.smpi import Platform, available, run_bsim, run_smpi

if not available():
    if os.environ.get("BSIM_REQUIRE_SMPI") == "1":
        raise RuntimeError("BSIM_REQUIRE_SMPI=1 but smpicc/smpirun are missing: "
                           "apt-get install libsimgrid-dev")
    pytest.skip("SimGrid SMPI not installed (apt-get install libsimgrid-dev); "
                "set BSIM_REQUIRE_SMPI=1 to require it", allow_module_level=True)

PLATFORMS = {
    "star16": (Platform("star", 16), 16),
    "torus16": (Platform("torus", 16, dims=(4, 4)), 16),
    "star64": (Platform("star", 64, lat=5e-7, bw=2e9), 64),
    "torus64": (Platform("torus", 64, dims=(4, 4, 4), lat=2e-7, bw=5e9), 64),
}
CASES = [   # program, bytes, iterations, compute seconds: eager and synchronous sizes
    ("pingpong", 1000, 5, 0.0), ("pingpong", 200000, 3, 0.0),
    ("ring", 1000, 5, 1e-5), ("ring", 100000, 4, 1e-4),
    ("halo2d", 8192, 4, 2e-5), ("halo2d", 50000, 4, 1e-4), ("halo2d", 200000, 3, 1e-4),
]
TOLERANCE = 0.005   # the target on star and torus: 0.5%


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_bsim_agrees_with_smpi(platform, case):
    plat, nranks = PLATFORMS[platform]
    smpi = run_smpi(case[0], plat, nranks, *case[1:])
    ours = run_bsim(case[0], plat, nranks, *case[1:])
    assert ours.time == pytest.approx(smpi.time, rel=TOLERANCE), (smpi.time, ours.time)


def test_the_paper_rules_differ_from_smpi_where_they_should():
    """The BSIM paper's receiver-side rule does not overlap compute with transfers: on the
    ring it is slower than SMPI by about the transfer time per iteration -- a different
    model, not an error (docs/validation.md)."""
    plat, nranks = PLATFORMS["star16"]
    smpi = run_smpi("ring", plat, nranks, 100000, 4, 1e-4)
    paper = run_bsim("ring", plat, nranks, 100000, 4, 1e-4, protocol="bsim")
    transfer = 2 * plat.lat + 100000 / plat.bw
    assert paper.time == pytest.approx(smpi.time + 4 * transfer - 4 * 16 / plat.bw, rel=0.01)
