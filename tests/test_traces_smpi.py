"""SMPI-produced time-independent traces: bsim's replay against SimGrid's own replay
(``smpirun -replay``) on the same platform, within 0.5% (the target of
``tests/test_smpi.py``).  The C programs of ``bsim/validation/c`` are traced with
``smpirun -trace-ti``; both replays use SMPI's physics (``docs/validation.md``) and the
same collective algorithm where the trace has one."""

from __future__ import annotations

import pytest
from conftest import require_smpi

from bsim.traces import replay
from bsim.validation.smpi import SMPI_CONTENTION, SMPI_PROTOCOL, Platform
from bsim.validation.smpi_replay import record_ti, replay_smpi

require_smpi()

CASES = {   # id: (program, platform, ranks, bytes, SimGrid setting, bsim collectives)
    "halo2d-star-small": ("halo2d", Platform("star", 4), 4, 1000, "smpi/reduce:binomial",
                          "algorithmic:reduce=binomial"),
    "halo2d-star-large": ("halo2d", Platform("star", 4), 4, 200000, "smpi/reduce:binomial",
                          "algorithmic:reduce=binomial"),
    "ring-torus": ("ring", Platform("torus", 8, dims=(2, 2, 2), lat=2e-7, bw=5e9), 8, 100000,
                   "smpi/reduce:binomial", "algorithmic:reduce=binomial"),
    "allreduce-star": ("allreduce", Platform("star", 8), 8, 65536, "smpi/allreduce:rdb",
                       "algorithmic:allreduce=recursive_doubling,reduce=binomial"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_replay_of_smpi_trace_agrees_with_smpi_replay(case, tmp_path):
    """The same trace, two replayers, one platform: within 0.5%."""
    program, plat, nranks, nbytes, cfg, colls = CASES[case]
    settings = (cfg, "smpi/reduce:binomial")
    index = record_ti(program, plat, nranks, nbytes, 3, 1e-4, tmp_path, cfg=settings)
    theirs = replay_smpi(index, plat, nranks, cfg=settings)
    ours = replay(str(index), network=plat.bsim_network(), protocol=SMPI_PROTOCOL,
                  contention=SMPI_CONTENTION, collectives=colls).elapsed
    assert ours == pytest.approx(theirs, rel=0.005), (ours, theirs)
