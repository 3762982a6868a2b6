"""Skeleton parameters that cannot describe a run are refused with one line naming them
(each was accepted before: the run simulated something else, or stopped in a traceback)."""

from __future__ import annotations

import pytest

from bsim.cli.main import main

NET = ["--network", "hockney:latency=1e-6,bandwidth=1e9", "--quiet"]


@pytest.mark.parametrize("skeleton, params, says", [
    # ne=16 bands split 8 + 4 simulated 12 bands while the result recorded ne=16
    ("phase", ["pb=2", "pf=1", "ne=16", "nf=64", "nblk=2", "band_counts=8/4"],
     "band_counts '8/4' hold 12 bands, not ne=16"),
    ("phase", ["pb=2", "pf=1", "ne=16", "nf=64", "nblk=2", "band_counts=10/10"],
     "band_counts '10/10' hold 20 bands, not ne=16"),
    # a 1-point FFT mesh (FFTs for free), or a TypeError about complex numbers
    ("phase", ["pb=2", "pf=1", "ne=16", "nf=64", "nblk=2", "fft_grid=0"], "fft_grid"),
    ("phase", ["pb=2", "pf=1", "ne=16", "nf=64", "nblk=2", "fft_grid=-1"], "fft_grid"),
    # elapsed 0.0: the 100 CG iterations had no solve to run in
    ("milc_rmd", ["nx=4", "ny=4", "nz=4", "nt=4", "trajecs=0", "warms=0"],
     "100 CG iterations need a CG solve"),
    # a ZeroDivisionError traceback
    ("hpl", ["n=64", "nb=16", "p=1", "q=2", "kernel=flat:rate=0"], "rate must be positive"),
    # ny = 6 over px = 4 pencils was floor-divided
    ("dns3d", ["nx=8", "ny=6", "nz=8", "px=4", "pz=2"], "nx and ny over px=4"),
])
def test_a_parameter_that_cannot_run_is_one_line(skeleton, params, says, capsys):
    argv = ["run", skeleton, *[x for p in params for x in ("--param", p)], *NET]
    if skeleton == "hpl":
        argv += ["-n", "2"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bsim: error:") and says in err[0], err


def test_band_counts_that_hold_every_band_still_run(capsys):
    assert main(["run", "phase", "--param", "pb=2", "--param", "pf=1", "--param", "ne=16",
                 "--param", "nf=64", "--param", "nblk=2", "--param", "band_counts=12/4",
                 *NET]) == 0
