"""A run warns of, and records, the calibration flags of the fits it takes from its machine
file (bsim/machines/flags.py; an outside review, /tmp/rv_cal2 finding 4): one warning line
per flagged fit it uses, naming the file, the fit and the flag, and
``Result.calibration_flags``; the flags of fits it does not use are not mentioned.

The profile is the review's ``pw.toml``: ``calibrate network`` on a three-piece network
(breaks 4 KiB, 64 KiB) flagged its Hockney fit (22% residual), which is ``[network]``.
"""

from __future__ import annotations

import json

import pytest
from conftest import needs_mpiexec, run_mpiexec

import bsim
from bsim.calibration.quality import fit_flags, loggp_range_texts
from bsim.cli.main import main
from bsim.outputs.result import Result

HOCKNEY_FLAG = ("hockney fit: relative residual 22% > 10%: a line does not describe these "
                "times (use the piecewise or LogGP variants)")
LARGE_FLAG = "loggp 65536 < S bytes: relative residual 12% > 10%"
KERNEL_FLAG = "linear fit: relative residual 25% > 10%: the model does not describe these times"
OTHER_FLAG = "linear fit: slope relative standard error 40% > 25%"
PW = f'''name = "vm"
description = "vm: measured with bsim calibrate network"
source = "bsim calibrate network on vm"
cores_per_node = 1

[network]
model = "hockney"
latency = 1.083971080691018e-06
bandwidth = 3072093850.950547

[network_variants.hockney_inter]
model = "hockney"
latency = 1.083971080691018e-06
bandwidth = 3072093850.950547

[network_variants.piecewise_inter]
model = "piecewise"
breaks = "4096/65536"
t0 = "1e-06/8e-06/2e-05"
tb = "1e-09/5e-10/2.5e-10"

[network_variants.loggp_inter_small]
model = "loggp"
L = 1e-6
o = 0.0
g = 0.0
G = 1e-9

[network_variants.loggp_inter_large]
model = "loggp"
L = 2e-5
o = 0.0
g = 0.0
G = 2.5e-10

[kernels.halo2d]
t_point = {{model = "linear", unit = "cells", t0 = 1e-5, slope = 2.5e-9}}

[kernels.sweep3d]
tcell = {{model = "linear", unit = "cells", t0 = 1e-5, slope = 1.5e-7}}

[hardware]
calibration_inter_flags = ["{HOCKNEY_FLAG}", "{LARGE_FLAG}"]
calibration_primary_pair = "inter"
calibration_kernel_halo2d_t_point_flags = ["{KERNEL_FLAG}"]
calibration_kernel_sweep3d_tcell_flags = ["{OTHER_FLAG}"]
'''
PINGPONG = '''from mpi4py import MPI
import numpy as np
c = MPI.COMM_WORLD
buf = np.zeros(65536, np.uint8)
for _ in range(10):
    if c.Get_rank() == 0:
        c.Send(buf, 1, 0)
        c.Recv(buf, 1, 0)
    else:
        c.Recv(buf, 0, 0)
        c.Send(buf, 0, 0)
'''


@pytest.fixture
def files(tmp_path):
    (tmp_path / "pw.toml").write_text(PW)
    (tmp_path / "pingpong.py").write_text(PINGPONG)
    return tmp_path


def _run(files, capsys, machine, *args):
    out = files / "r.json"
    status = main(["run", *args, "--machine", str(files / machine), "--protocol", "bsim",
                   "--quiet", "--json", str(out)])
    err = capsys.readouterr().err
    assert status == 0, err
    return json.loads(out.read_text()), [line for line in err.splitlines() if line]


def test_the_flagged_hockney_network_is_warned_of_and_recorded(files, capsys):
    """The review's run: 20 one-way 64 KiB messages at the flagged fit, 20 x (1.084 us +
    65536 B / 3.072 GB/s) = 448.33 us (the truth is 815.36 us): one warning line naming
    the file, [network] and the flag, and the flag in the result JSON."""
    result, err = _run(files, capsys, "pw.toml", str(files / "pingpong.py"), "-n", "2")
    assert result["elapsed"] == pytest.approx(20 * (1.083971080691018e-06 + 65536 /
                                                    3072093850.950547), rel=1e-12)
    assert len(err) == 1, err
    assert err[0].startswith(f"bsim: warning: machine file '{files / 'pw.toml'}': [network] "
                             f"(Hockney fit, inter-node pair) is flagged"), err
    assert err[0].endswith(HOCKNEY_FLAG)
    assert result["calibration_flags"] == {"[network]": [HOCKNEY_FLAG]}


def test_an_unflagged_variant_says_nothing(files, capsys):
    """The piecewise variant is the truth (815.36 us) and was not flagged: no warning, no
    field (the Hockney and LogGP flags are about fits the run does not use)."""
    result, err = _run(files, capsys, "pw.toml:piecewise_inter", str(files / "pingpong.py"),
                       "-n", "2")
    assert result["elapsed"] == pytest.approx(20 * (8e-6 + 65536 * 5e-10), rel=1e-12)
    assert err == [] and "calibration_flags" not in result


@pytest.mark.parametrize("variant, flags", [("loggp_inter_large", [LARGE_FLAG]),
                                            ("loggp_inter_small", [])])
def test_a_loggp_range_gets_the_flags_of_its_range_only(files, capsys, variant, flags):
    """LogGP range variants are the pieces of the piecewise fit: the large one (sizes above
    64 KiB) carries the large range's flag, the small one none."""
    result, err = _run(files, capsys, f"pw.toml:{variant}", str(files / "pingpong.py"),
                       "-n", "2")
    assert result.get("calibration_flags", {}) == (
        {f"[network_variants.{variant}]": flags} if flags else {})
    assert len(err) == len(flags)


def test_a_network_table_replaced_by_hand_is_not_the_flagged_fit(files, capsys):
    """[network] that is no longer calibrate's Hockney fit (edited) carries no flags."""
    (files / "pw.toml").write_text(PW.replace("latency = 1.083971080691018e-06\nbandwidth",
                                              "latency = 2e-06\nbandwidth", 1))
    result, err = _run(files, capsys, "pw.toml", str(files / "pingpong.py"), "-n", "2")
    assert err == [] and "calibration_flags" not in result


def test_a_flagged_kernel_fit_is_warned_of_and_the_network_and_unused_ones_not(files,
                                                                             capsys):
    """halo2d takes [kernels.halo2d] t_point (flagged) and, with --network, not the flagged
    [network]; sweep3d's flagged tcell is not used: one line, one entry."""
    args = ["halo2d", "--network", "hockney:latency=1e-6,bandwidth=1e9"]
    for p in ("px=2", "py=2", "nx=64", "ny=64", "iterations=2"):
        args += ["--param", p]
    result, err = _run(files, capsys, "pw.toml", *args)
    assert result["params"]["t_point"] == 2.5e-9
    assert len(err) == 1 and "[kernels.halo2d] t_point (bsim fit kernel) is flagged" in err[0]
    assert result["calibration_flags"] == {"[kernels.halo2d] t_point": [KERNEL_FLAG]}


def test_simulate_warns_and_records_the_machines_network_flags(files):
    """From Python: bsim.simulate(..., machine=FILE) on the file's network does the same."""
    def main():
        bsim.MPI.COMM_WORLD.Barrier()

    with pytest.warns(UserWarning, match=r"\[network\] \(Hockney fit, inter-node pair\)"):
        res = bsim.simulate(main, 2, machine=str(files / "pw.toml"), protocol="bsim")
    assert res.calibration_flags == {"[network]": [HOCKNEY_FLAG]}
    assert Result.from_dict(res.to_dict()).calibration_flags == res.calibration_flags
    plain = bsim.simulate(main, 2, machine=str(files / "pw.toml:piecewise_inter"), protocol="bsim")
    assert plain.calibration_flags == {} and "calibration_flags" not in plain.to_dict()


def test_flags_are_matched_to_their_fit_by_the_words_quality_writes():
    """fit_flags reads back what hockney_flags, loggp_flags and dof_flags write."""
    flags = [HOCKNEY_FLAG, "piecewise fit: 6 sizes for its 6 parameters (0 degrees of freedom)",
             "loggp 0 <= S <= 4096 bytes degenerate: G = 0 s/B (must be > 0)",
             "loggp 0 <= S <= 4096 bytes; 65536 < S bytes: 2 sizes for the 2 parameters",
             "loggp 0 <= S bytes: relative residual 30% > 10%"]
    small, medium, large = loggp_range_texts([4096, 65536])
    assert (small, medium, large) == ("0 <= S <= 4096 bytes", "4096 < S <= 65536 bytes",
                                      "65536 < S bytes")
    assert fit_flags(flags, "hockney") == flags[:1]
    assert fit_flags(flags, "piecewise") == flags[1:2]
    assert fit_flags(flags, "loggp", [small]) == flags[2:4]
    assert fit_flags(flags, "loggp", [medium]) == []
    assert fit_flags(flags, "loggp", [large]) == flags[3:4]
    assert fit_flags(flags, "loggp", loggp_range_texts([])) == flags[4:]


def test_hpl_warns_of_the_flagged_blas_fits_it_reads(tmp_path, capsys):
    """HPL reads [kernels.hpl_blas] itself: with --machine, its flagged dgemm fit is warned
    of and recorded; a flagged fit of a kernel HPL does not read (zgemm) is not."""
    path = tmp_path / "blas.toml"
    path.write_text('name = "b"\ndescription = "d"\nsource = "s"\ncores_per_node = 1\n'
                    '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n'
                    '[kernels.hpl_blas]\n'
                    'dgemm = {model = "linear", unit = "flops", t0 = 0.0, slope = 1e-9}\n'
                    '[hardware]\n'
                    f'calibration_kernel_hpl_blas_dgemm_flags = ["{KERNEL_FLAG}"]\n'
                    f'calibration_kernel_hpl_blas_zgemm_flags = ["{OTHER_FLAG}"]\n')
    out = tmp_path / "r.json"
    args = ["run", "hpl", "--machine", str(path), "--quiet", "--json", str(out)]
    for p in ("n=64", "nb=16", "p=1", "q=2", "verbose=false"):
        args += ["--param", p]
    assert main(args) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(err) == 1 and "[kernels.hpl_blas] dgemm (bsim fit kernel)" in err[0], err
    assert json.loads(out.read_text())["calibration_flags"] == {
        "[kernels.hpl_blas] dgemm": [KERNEL_FLAG]}


def test_a_sweep_row_records_the_flags_of_the_network_it_ran_on(files, capsys):
    """bsim sweep on the flagged profile: each row's settings carry the [network] flag, as
    bsim run's JSON does (sweeps warned of kernel fits only, and recorded none)."""
    prefix = files / "sw"
    status = main(["sweep", str(files / "pingpong.py"), "--param", "ranks=2",
                   "--machine", str(files / "pw.toml"), "--quiet", "-o", str(prefix)])
    err = capsys.readouterr().err
    assert status == 0, err
    rows = json.loads((files / "sw.json").read_text())["rows"]
    assert [r["settings"]["calibration_flags"] for r in rows] == [
        {"[network]": [HOCKNEY_FLAG]}]
    assert "[network] (Hockney fit, inter-node pair) is flagged" in err


MILC_FIT = '{model = "cache2", unit = "sites", b1 = 4e-7, b2 = 5e-7, s = 1200.0}'


def _milc_machine(tmp_path):
    """A machine file whose [kernels.milc] FF and CG fits are flagged."""
    path = tmp_path / "m.toml"
    path.write_text('name = "m"\ndescription = "d"\nsource = "s"\ncores_per_node = 1\n'
                    '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n'
                    '[kernels.milc]\n' + "".join(f"{k} = {MILC_FIT}\n"
                                                 for k in ("LL", "FL", "GF", "FF", "CG"))
                    + '[hardware]\n'
                    f'calibration_kernel_milc_FF_flags = ["{OTHER_FLAG}"]\n'
                    f'calibration_kernel_milc_CG_flags = ["{KERNEL_FLAG}"]\n')
    return path


def _milc_args(skeleton, path, out):
    args = ["run", skeleton, "--machine", str(path), "--protocol", "bsim", "--quiet", "--json",
            str(out)]
    for p in ("nx=4", "ny=4", "nz=4", "nt=4", "nprocs=2", "niters=2"):
        args += ["--param", p]
    return args


@pytest.mark.parametrize("skeleton, warned", [("milc_cg", ["CG"]),
                                              ("milc_rmd", ["FF", "CG"])])
def test_milc_warns_of_the_flagged_kernels_it_reads_only(tmp_path, capsys, skeleton, warned):
    """ks_congrad computes with the CG kernel alone, su3_rmd with all five (MILC paper,
    Eqs. 2-4): with FF and CG flagged, milc_cg warns of and records CG only (it warned of
    every flagged entry of [kernels.milc]), milc_rmd of both."""
    out = tmp_path / "r.json"
    assert main(_milc_args(skeleton, _milc_machine(tmp_path), out)) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(err) == len(warned), err
    for name, line in zip(warned, err, strict=True):
        assert f"[kernels.milc] {name} (bsim fit kernel) is flagged" in line
    flags = {"FF": [OTHER_FLAG], "CG": [KERNEL_FLAG]}
    assert json.loads(out.read_text())["calibration_flags"] == {
        f"[kernels.milc] {name}": flags[name] for name in warned}


@needs_mpiexec
def test_a_distributed_run_warns_of_a_flagged_fit_once(tmp_path):
    """mpiexec -n 2 bsim run: both host processes read the flagged fit, host 0 alone warns
    (each did), and the JSON records it."""
    out = tmp_path / "r.json"
    args = _milc_args("milc_cg", _milc_machine(tmp_path), out)
    proc = run_mpiexec(2, f"import sys\nfrom bsim.cli.main import main\n"
                          f"sys.exit(main({args!r}))\n")
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "is flagged" in ln]
    assert len(lines) == 1 and "[kernels.milc] CG (bsim fit kernel)" in lines[0], proc.stderr
    assert json.loads(out.read_text())["calibration_flags"] == {
        "[kernels.milc] CG": [KERNEL_FLAG]}
