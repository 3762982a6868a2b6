"""Calibration under real MPI (mpiexec -n 2, tiny sweeps) and the CLI's parsers.

The MPI tests run ``mpiexec -n 2 python -m bsim.calibration ...`` in a
subprocess and are skipped when mpi4py or mpiexec is missing (CI installs
the ``mpi`` extra: mpi4py and the mpich wheel).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bsim
from bsim.cli import calibrate as cli

ROOT = Path(__file__).resolve().parents[1]


def _mpiexec() -> str | None:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
needs_mpi = pytest.mark.skipif(
    MPIEXEC is None or importlib.util.find_spec("mpi4py") is None,
    reason="needs mpi4py and mpiexec (pip install 'bsim[mpi]')")

TINY = ["--min-reps", "3", "--max-reps", "6", "--max-seconds", "0.02"]


def run_mpi(nprocs: int, *args: str) -> subprocess.CompletedProcess[str]:
    """``mpiexec -n NPROCS python -m bsim.calibration ARGS`` from the repository root."""
    assert MPIEXEC is not None
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([MPIEXEC, "-n", str(nprocs), sys.executable, "-m",
                           "bsim.calibration", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def pingpong(nbytes=1000):
    """Rank 0 sends nbytes to rank 1 and back."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    buf = bsim.buffer(nbytes, MPI.BYTE)
    if comm.rank == 0:
        comm.Send(buf, dest=1)
        comm.Recv(buf, source=1)
    else:
        comm.Recv(buf, source=0)
        comm.Send(buf, dest=0)


@needs_mpi
def test_calibrate_network_writes_a_loadable_profile(tmp_path):
    """A tiny sweep under mpiexec -n 2 gives a preset that load_machine and simulate accept."""
    from bsim.machines import load_machine, network_spec
    from netmodels import REGISTRY, build_network
    prof = tmp_path / "host.toml"
    proc = run_mpi(2, "calibrate", "network", "--profile", str(prof), "--name", "testhost",
                   "--sizes", "0,64,1K,8K,64K,256K", "--stream-count", "4", *TINY)
    assert proc.returncode == 0, proc.stderr
    assert "intra-node pair (0, 1)" in proc.stdout and "hockney: latency" in proc.stdout
    m = load_machine(prof)
    assert m.name == "testhost" and m.cores_per_node == 2
    assert m.network["model"] == "hockney" and m.network["latency"] >= 0
    variants = m.network_variants
    assert {"hockney_intra", "piecewise_intra", "loggp_intra"} <= set(variants), proc.stdout
    assert len(variants["piecewise_intra"]["breaks"].split("/")) == 2
    for name, table in variants.items():
        if table["model"] in REGISTRY:             # every model netmodels has registered
            build_network(network_spec(m, name))
    result = bsim.simulate(pingpong, ranks=2, network=network_spec(m), protocol="bsim")
    lat, bw = m.network["latency"], m.network["bandwidth"]
    assert result.elapsed == pytest.approx(2 * (lat + 1000 / bw))
    data = Path(m.hardware["calibration_network_data"])
    header = data.read_text().splitlines()[0].split(",")
    assert {"pair", "measure", "nbytes", "median", "q1", "q3", "mad", "outliers"} <= set(header)


@needs_mpi
def test_calibrate_collectives_writes_the_table(tmp_path):
    """The CSV has the table model's columns and loads through the profile's [collectives]."""
    from bsim.machines import collective_spec, load_machine
    from netmodels.collective_costs import build_collective_model
    prof = tmp_path / "host.toml"
    prof.write_text('name = "h"\ndescription = "d"\nsource = "s"\ncores_per_node = 2\n'
                    '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n')
    proc = run_mpi(2, "calibrate", "collectives", "--profile", str(prof), "--sizes",
                   "0,64,4K", *TINY)
    assert proc.returncode == 0, proc.stderr
    m = load_machine(prof)
    assert m.collectives["model"] == "table"
    model = build_collective_model(collective_spec(m))
    assert model.ops == ["allreduce", "alltoall", "barrier", "bcast"]
    for op in model.ops:
        assert model.time(op, 2, 4096) >= model.time(op, 2, 0) >= 0
    assert model.time("allreduce", 2, 64) > 0
    csv = tmp_path / "host.collectives.csv"
    header = [ln for ln in csv.read_text().splitlines() if not ln.startswith("#")][0]
    assert header.startswith("op,nprocs,nbytes,seconds,median,q1,q3,mad")
    assert m.network["latency"] == 1e-6                  # the rest of the file is kept


@needs_mpi
def test_calibrate_needs_two_processes(tmp_path):
    """One process: exit status 2 and a message that says how to run it."""
    proc = run_mpi(1, "calibrate", "network", "--profile", str(tmp_path / "p.toml"), "--quick")
    assert proc.returncode == 2
    assert "needs >= 2 processes" in proc.stderr and "mpiexec -n 2" in proc.stderr
    proc = run_mpi(1, "calibrate", "collectives", "--profile", str(tmp_path / "p.toml"),
                   "--quick")
    assert proc.returncode == 2 and ">= 2 process counts" in proc.stderr


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bsim")
    cli.add_parsers(p.add_subparsers(dest="command", required=True))
    return p


def test_add_parsers_registers_the_commands():
    """calibrate network/collectives and fit kernel parse with their defaults."""
    p = _parser()
    ns = p.parse_args(["calibrate", "network", "--sizes", "0,1K,4M", "--quick"])
    assert (ns.command, ns.calibrate_what, ns.sizes, ns.quick) == (
        "calibrate", "network", [0, 1024, 4 << 20], True)
    ns = p.parse_args(["calibrate", "collectives", "--nprocs", "1,2", "--raw"])
    assert ns.nprocs == [1, 2] and ns.raw and ns.profile == "machine.toml"
    ns = p.parse_args(["fit", "kernel", "d.csv", "--model", "cache2"])
    assert (ns.fit_what, ns.data, ns.model, ns.kernel) == ("kernel", "d.csv", "cache2", "kernel")
    with pytest.raises(SystemExit):
        p.parse_args(["calibrate", "network", "--sizes", "12Q"])


def test_parse_sizes_units():
    """K, M, G are powers of 1024."""
    assert cli.parse_sizes("0, 8, 2K, 1M, 1G") == [0, 8, 2048, 1 << 20, 1 << 30]
    with pytest.raises(argparse.ArgumentTypeError, match="bad size"):
        cli.parse_sizes("-1")


def test_jacobi_skeleton_matches_hand_count():
    """P = 2 (1 x 2 grid): each iteration costs l + 8 n / w + step on both ranks."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from apps import jacobi2d_skeleton
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    kernel = {"model": "linear", "t0": 1e-5, "slope": 2e-9}
    n, iters, lat, bw = 256, 5, 2e-6, 1e9
    step = 1e-5 + 2e-9 * n * n / 2
    res = bsim.simulate(jacobi2d_skeleton.main, ranks=2,
                        network=f"hockney:latency={lat},bandwidth={bw}",
                        kwargs={"n": n, "iterations": iters, "kernel": kernel}, protocol="bsim")
    assert res.finish.tolist() == pytest.approx([iters * (lat + 8 * n / bw + step)] * 2)
    one = bsim.simulate(jacobi2d_skeleton.main, ranks=1, network="zero",
                        kwargs={"n": n, "iterations": iters, "kernel": kernel}, protocol="bsim")
    assert one.elapsed == pytest.approx(iters * (1e-5 + 2e-9 * n * n))


def _summary(value):
    from bsim.calibration.stats import summarize
    return summarize([value] * 6)


def test_fit_pair_and_profile_tables(monkeypatch):
    """Synthetic two-regime measurements: Hockney, 3 pieces, LogGP ranges and their tables."""
    pytest.importorskip("mpi4py")
    from bsim.calibration import netprofile
    from bsim.calibration.network_bench import NetworkCalibration, PairResult, fit_pair
    from netmodels import REGISTRY, build_network
    sizes = [0, 64, 1024, 8192, 65536, 262144, 1 << 20]
    o, n = 0.5e-6, 8

    def half(s):      # one-way time: eager below 8 KiB, a slower start above
        return 2 * o + (1e-6 if s <= 8192 else 5e-6) + max(s - 1, 0) * 1e-10

    res = PairResult("intra", (0, 1), sizes, count=n)
    for s in sizes:
        gap = 1e-6 + max(s - 1, 0) * 1e-10
        t1 = half(s) + half(0)
        res.pingpong.append(_summary(half(s)))
        res.stream1.append(_summary(t1))
        res.streamn.append(_summary(t1 + (n - 1) * gap))
        delay = max(gap, t1)
        res.delays.append(delay)
        res.streamd.append(_summary(t1 + (n - 1) * (o + delay)))
        res.inner.append(1)
    fits = fit_pair(res)
    assert fits.piecewise is not None and len(fits.loggp) == 3
    assert 8192 in fits.piecewise.breaks                # the regime change
    for r in fits.loggp:
        assert r.o == pytest.approx(o, rel=1e-6) and not r.o_capped
        # a range of 2 sizes has no degrees of freedom: no residual to show
        assert r.rel_residual < 1e-6 if r.dof else math.isnan(r.rel_residual)
    monkeypatch.setattr(netprofile, "_loader_accepts", lambda model: True)
    cal = NetworkCalibration({"intra": res}, {"intra": fits}, [2])
    parts = netprofile.profile_parts(cal, None, "x", None)
    variants = parts["variants"]
    assert {"hockney_intra", "piecewise_intra", "loggp_intra", "loggp_intra_small",
            "loggp_intra_medium", "loggp_intra_large", "loggp_ranges_intra"} <= set(variants)
    ranged = variants["loggp_ranges_intra"]
    assert ranged["breaks"] == "/".join(map(str, fits.piecewise.breaks))
    if "loggp_ranges" in REGISTRY:
        model = build_network("loggp_ranges:" + ",".join(
            f"{k}={v}" for k, v in ranged.items() if k != "model"))
        for s in sizes:
            assert model.cost(0, 1, s) == pytest.approx(half(s), rel=1e-6)
    assert "pair" in netprofile.csv_rows({"intra": res}).splitlines()[0]


def test_calibration_flags_fits_it_should_not_be_trusted_with():
    """The issue's three cases: a line through curved times (residual), noisy few points
    (standard error), LogGP whose small-message terms vanish (degenerate) -- and a clean
    fit that is not flagged."""
    from bsim.calibration.netfit import fit_hockney, fit_loggp
    from bsim.calibration.quality import MAX_REL_ERROR, hockney_flags, loggp_flags
    sizes = [8, 64, 512, 4096, 32768, 262144]
    clean = fit_hockney(sizes, [2e-6 + s / 1e9 for s in sizes])
    assert hockney_flags(clean) == []
    # times that jump 20x at 4 KiB: no line fits them
    curved = fit_hockney(sizes, [1e-6 + s / (1e8 if s >= 4096 else 2e9) for s in sizes])
    assert any("relative residual" in f for f in hockney_flags(curved))
    # three sizes scattered by +-40%: the parameters are not pinned down
    noisy = fit_hockney([8, 16, 32], [3e-6, 1.2e-6, 3.5e-6])
    assert any(f"> {MAX_REL_ERROR:.0%}" in f for f in hockney_flags(noisy))
    # a LogGP range whose intercept is 0: L = o = g = 0
    s = [1024, 2048, 4096]
    zero = fit_loggp(s, [(x - 1) * 1e-9 for x in s], [0.0] * 3, [0.0] * 3)
    assert any("L = o = g = 0" in f for f in loggp_flags(zero))
    real = fit_loggp(s, [2e-6 + x * 1e-9 for x in s], [1e-6] * 3, [3e-7] * 3)
    assert loggp_flags(real) == []
