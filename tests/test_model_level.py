"""What a prediction means: the model level, the compute source and the per-P note."""

from __future__ import annotations

import json

import pytest

import bsim
from bsim import MPI
from bsim.outputs.compare import compare
from bsim.outputs.model_level import compute_source, model_level, nearest_per_p_variant
from bsim.validation.smpi import SMPI_CONTENTION, SMPI_PROTOCOL


@pytest.mark.parametrize("protocol, contention, level", [
    ("bsim:send_cost=0.0,poll_time=1e-06", "none", "paper rules (bsim), no contention"),
    ("loggp:eager_limit=65536", "fluid", "LogGP, fluid contention"),
    ("loggops:O=0.0,S=65536", "none", "LogGOPS, no contention"),
    (SMPI_PROTOCOL, SMPI_CONTENTION, "SMPI's rules, CM02 sharing (SMPI's)"),
])
def test_each_level_is_named(protocol, contention, level):
    assert model_level(protocol, contention) == level


def test_the_compute_source_says_when_add_time_is_taken_as_written():
    assert compute_source("", "").startswith("add_time as written")
    assert compute_source("t_cell = 1e-7: es40 [kernels.sweep3d]", "") \
        == "t_cell = 1e-7: es40 [kernels.sweep3d]"
    assert compute_source("", "measure:scale=2") == "host-measured (measure:scale=2)"


@pytest.mark.parametrize("ranks, nearest", [(16, "p64"), (100, "p64"), (1500, "p2048"),
                                            (3000, "p4096"), (10000, "p4096")])
def test_the_nearest_per_p_variant_in_ratio(ranks, nearest):
    note = nearest_per_p_variant("bgp", ["p64", "p64_max", "p2048", "p4096"], None, ranks)
    assert note.endswith(f"is bgp:{nearest}") and "(p64, p2048, p4096)" in note
    assert nearest_per_p_variant("bgp", ["p64"], "p64", ranks) == ""
    assert nearest_per_p_variant("es45", ["fattree"], None, ranks) == ""


def barrier():
    MPI.COMM_WORLD.Barrier()


def test_a_run_records_and_prints_what_it_means(tmp_path):
    with pytest.warns(UserWarning, match="nearest to 16 ranks is bgp:p64"):
        res = bsim.simulate(barrier, 16, machine="bgp", protocol="bsim")
    data = json.loads(json.dumps(res.to_dict()))
    assert data["model_level"] == "paper rules (bsim), no contention"
    assert data["compute_source"].startswith("add_time as written")
    assert data["notes"] and "bgp:p64" in data["notes"][0]
    text = res.summary()
    assert "  model     paper rules (bsim), no contention" in text and "bgp:p64" in text
    other = bsim.simulate(barrier, 64, machine="bgp:p64", protocol="loggops")
    assert other.notes == []
    report = compare(res, other)
    assert "model paper rules (bsim), no contention" in report
    assert "model LogGOPS, no contention" in report


def test_phase_on_a_machine_says_its_ffts_take_an_assumed_time():
    """PHASE's FFT flop time is no machine's: a --machine run says it stays assumed."""
    from bsim.cli.targets import load_target
    small = {"ne": 32, "nf": 1024, "pb": 2, "pf": 4}
    account = load_target("phase", small, machine="petascale_torus").kernel_model
    assert "[kernels.hpl_blas]" in account
    assert "FFTs: fft_flop_time = 1e-09 (ASSUMED" in account
    given = load_target("phase", {**small, "fft_flop_time": 2e-9},
                        machine="petascale_torus").kernel_model
    assert "ASSUMED" not in given
    assert load_target("phase", small).kernel_model == ""
