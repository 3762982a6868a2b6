"""Compute times come from the machine a run names (bsim/machines/kernels.py).

Expected values are derived by hand from the machine files' figures and the
papers' numbers, never from bsim's output.
"""

from __future__ import annotations

import json

import pytest

import bsim
from bsim.cli.main import main
from bsim.cli.targets import load_target
from bsim.errors import AbovePeakError
from bsim.machines import MachineError, list_machines, load_machine, network_spec
from skeletons import registry


def test_a_machine_table_is_used_as_given():
    """sweep3d on es40: the modeling tutorial's Tcell = 120 ns from [kernels.sweep3d]."""
    t = load_target("sweep3d", {}, None, "es40")
    assert t.params["t_cell"] == 120e-9
    assert "es40 [kernels.sweep3d] tcell" in t.kernel_model


def test_the_generic_model_scales_the_reference_by_peak():
    """sweep3d on bgp (no table): 120 ns x 1.666 GF/s (ES40 EV68) / 3.4 GF/s (BG/P core)."""
    t = load_target("sweep3d", {}, None, "bgp")
    assert t.params["t_cell"] == pytest.approx(120e-9 * 1.666e9 / 3.4e9, rel=1e-12)
    assert "generic roofline on bgp" in t.kernel_model


def test_compute_times_differ_across_machines_where_the_hardware_does():
    """The same skeleton, four machines: four different compute times per cell."""
    cells = {m: load_target("sweep3d", {}, None, m).params["t_cell"]
             for m in ("es40", "bgp", "xt5", "petascale_torus")}
    assert len(set(cells.values())) == 4
    # faster cores, shorter cells
    assert cells["petascale_torus"] < cells["xt5"] < cells["bgp"] < cells["es40"]


def test_a_memory_bound_stencil_uses_the_memory_term():
    """halo2d on bgp: 24 B per point over 10 GB/s / 4 cores = 9.6 ns (> 4 flop / 3.4 GF/s)."""
    t = load_target("halo2d", {}, None, "bgp")
    assert t.params["t_point"] == pytest.approx(24 / (10e9 / 4), rel=1e-12)
    assert "memory-bound" in t.kernel_model


def test_a_missing_piece_is_an_error_that_names_it():
    """No silent fallback: halo2d on xt5 (no memory bandwidth), milc on es40 (no table)."""
    with pytest.raises(MachineError, match="memory_bandwidth_per_node"):
        load_target("halo2d", {}, None, "xt5")
    with pytest.raises(MachineError, match=r"no \[kernels.milc\] table \(the compute-time fits"):
        load_target("milc_cg", {}, None, "es40")
    # a value the user gives wins, and is said to be given
    t = load_target("halo2d", {"t_point": 3e-9}, None, "xt5")
    assert t.params["t_point"] == 3e-9 and t.kernel_model == "t_point = 3e-09 (given)"


def test_hpl_without_a_table_runs_at_the_reference_fraction_of_peak():
    """hpl on xe6: PRIMEQUEST's dgemm (1/0.165 ns = 6.06 GF/s of a 6.4 GF/s core) fraction
    of the Opteron core's 8.4 GF/s."""
    t = load_target("hpl", {}, None, "xe6")
    rate = float(t.params["kernel"].split("=")[1])
    assert rate == pytest.approx(8.4e9 / 0.165e-9 / 6.4e9, rel=1e-12)


def test_a_prediction_above_peak_is_an_error():
    """hpl at 1 Tflop/s per core on bgp's 3.4 GF/s cores: refused, naming both rates."""
    from skeletons.hpl import main as hpl_main
    from skeletons.models.hpl import hpl_flops
    with pytest.raises(AbovePeakError, match="above the machine's peak 13.6 GFlop/s"):
        bsim.simulate(hpl_main, 4, machine="bgp", flops=hpl_flops(2000),
                      kwargs=dict(n=2000, nb=64, p=2, q=2, kernel="flat:rate=1e12",
                                  verbose=False))



def test_no_work_in_no_time_is_not_above_peak():
    """A program that computes nothing and takes no simulated time has no rate to refuse
    (halo2d with iterations=0 was refused as "inf GFlop/s"); any work in no time still is."""
    res = bsim.simulate(lambda: None, 2, machine="bgp", flops=0.0)
    assert res.elapsed == 0.0 and res.flops == 0.0
    with pytest.raises(AbovePeakError, match="computes 1 flop in 0 s of compute time, inf"):
        bsim.simulate(lambda: None, 2, machine="bgp", flops=1.0)


def test_ranks_sharing_a_node_share_its_peak_whatever_the_presets_network():
    """petascale_torus's nodes are 8 x 64 GF/s; its [kernels.hpl_blas] dgemm runs at 63% of
    a whole node, right for its one rank per node.  On a torus with cores=8, 16 ranks
    fill 2 nodes: 1,024 GF/s, 64 GF/s a rank, and a rank at ~322 GF/s is 5x what its core
    can do.  The peak now follows the run's network (it was the preset's one rank per
    node: the run passed as '28.5% of peak' at 2,338 GF/s)."""
    from skeletons.hpl import main as hpl_main
    from skeletons.models.hpl import hpl_flops
    net = "torus:dims=4x4x4,link_bandwidth=1e10,hop_latency=1e-7,latency=1e-6,cores=8"
    with pytest.raises(AbovePeakError, match=r"16 ranks on 2 nodes of 512 GFlop/s"):
        bsim.simulate(hpl_main, 16, machine="petascale_torus", network=net,
                      flops=hpl_flops(4000), kwargs=dict(n=4000, nb=128, p=4, q=4,
                                                         kernel="petascale_torus",
                                                         verbose=False))
    # one rank a node (the preset's layout) on the same torus: 16 nodes, within peak
    res = bsim.simulate(hpl_main, 16, machine="petascale_torus", network=net[:-1] + "1",
                        flops=hpl_flops(4000), kwargs=dict(n=4000, nb=128, p=4, q=4,
                                                           kernel="petascale_torus",
                                                           verbose=False))
    assert res.peak_flops == 16 * 8 * 64e9


def test_a_kernel_faster_than_a_core_is_refused_even_when_communication_dilutes_it():
    """hpl with a 1 TF/s kernel on PRIMEQUEST's 6.4 GF/s cores: the run's average rate is
    about half of peak (communication dominates) but its compute time would need 1 TF/s
    a rank; the check bounds the flops by the compute time (it passed as '52% of peak')."""
    from skeletons.hpl import main as hpl_main
    from skeletons.models.hpl import hpl_flops
    with pytest.raises(AbovePeakError, match="faster than the hardware"):
        bsim.simulate(hpl_main, 4, machine="primequest", flops=hpl_flops(2000),
                      kwargs=dict(n=2000, nb=64, p=2, q=2, kernel="flat:rate=1e12",
                                  verbose=False))
    res = bsim.simulate(hpl_main, 4, machine="primequest", flops=hpl_flops(2000),
                        kwargs=dict(n=2000, nb=64, p=2, q=2, kernel="flat:rate=6e9",
                                    verbose=False))
    assert res.flops / res.elapsed < res.peak_flops

def test_the_variant_of_a_machine_is_its_network():
    """power5:p1024 runs on the MILC paper's P = 1024 effective Hockney network."""
    assert load_machine("power5:p1024").spec == "power5:p1024"
    res = bsim.simulate(lambda: None, 2, machine="power5:p1024")
    assert res.machine == "power5:p1024"
    assert res.network.startswith(network_spec("power5", "p1024").split(",")[0])
    with pytest.raises(MachineError, match="no network variant 'p7'; valid: "):
        load_machine("power5:p7")


@pytest.mark.parametrize("machine", list_machines())
@pytest.mark.parametrize("skeleton", ["halo2d", "sweep3d", "hpl", "milc_cg", "phase", "sage",
                                      "dns3d"])
def test_every_skeleton_on_every_machine_runs_under_peak_or_says_what_is_missing(
        skeleton, machine, tmp_path, capsys):
    """A small case of each (skeleton, preset): it runs and stays under peak, or stops with
    one line naming what the machine file lacks."""
    small = {"halo2d": ["px=2", "py=2", "nx=64", "ny=64", "iterations=2"],
             "sweep3d": ["px=2", "py=2", "nx=8", "ny=8", "nz=10", "mk=5", "mm=3", "mmi=3"],
             "hpl": ["n=256", "nb=32", "p=2", "q=2", "verbose=false"],
             "milc_cg": ["nx=8", "ny=8", "nz=8", "nt=8", "niters=2"],
             "phase": ["ne=16", "nf=256", "pb=2", "pf=2", "verbose=false"],
             "sage": ["cells=512", "cycles=1", "float_gs=4", "int_gs=1"],
             "dns3d": ["nx=32", "ny=32", "nz=32", "px=2", "pz=2"]}[skeleton]
    out = tmp_path / "r.json"
    args = ["run", skeleton, "--machine", machine, "--quiet", "--json", str(out)]
    if skeleton == "sage":   # weak scaling: any rank count
        args += ["-n", "4"]
    for p in small:
        args += ["--param", p]
    status = main(args)
    err = capsys.readouterr().err
    if status == 0:
        data = json.loads(out.read_text())
        assert data["machine"] == machine and data["kernel_model"]
        if "flops" in data and "peak_flops" in data:
            assert data["flops"] / data["elapsed"] <= data["peak_flops"]
    else:
        assert status == 2 and err.count("\n") == 1 and "add " in err, err


def test_every_registered_skeleton_declares_where_its_compute_comes_from():
    """Every bundled skeleton takes its compute times from the machine a run names."""
    for name in registry.names():
        assert registry.get(name).machine_kernel is not None, name


NETWORK_ONLY = ('name = "host"\ndescription = "d"\nsource = "s"\ncores_per_node = 2\n'
                '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n')
SWEEP_SMALL = ["px=2", "py=2", "nx=8", "ny=8", "nz=10", "mk=5", "mm=3", "mmi=3"]


def test_a_fitted_linear_kernel_table_runs_the_skeleton_at_its_slope(tmp_path, capsys):
    """The documented path: data made from T(x) = 150 ns x, 'bsim fit kernel --model linear
    --app sweep3d --kernel tcell' into a profile, 'bsim run sweep3d --machine FILE': each
    of the 2 x 2 ranks updates 8 octants x mm 3 x nz 10 x (8/2) x (8/2) = 3840 cell-angles,
    so it computes 3840 x 150 ns = 576 us (the fitted table crashed float() before)."""
    pytest.importorskip("scipy")
    prof = tmp_path / "host.toml"
    prof.write_text(NETWORK_ONLY)
    data = tmp_path / "tcell.csv"
    data.write_text("cells,seconds\n" + "".join(f"{x},{150e-9 * x!r}\n" for x in
                                                (1e3, 1e3, 1e4, 1e5, 1e5, 1e6)))
    assert main(["fit", "kernel", str(data), "--model", "linear", "--profile", str(prof),
                 "--app", "sweep3d", "--kernel", "tcell"]) == 0
    assert load_machine(prof).kernels["sweep3d"]["tcell"]["model"] == "linear"
    out = tmp_path / "r.json"
    args = ["run", "sweep3d", "--machine", str(prof), "--quiet", "--json", str(out)]
    for p in SWEEP_SMALL:
        args += ["--param", p]
    assert main(args) == 0, capsys.readouterr().err
    result = json.loads(out.read_text())
    assert result["params"]["t_cell"] == pytest.approx(150e-9, rel=1e-9)
    assert result["per_rank"]["calc"] == pytest.approx([3840 * 150e-9] * 4, rel=1e-9)
    assert "bsim fit kernel, linear slope" in result["kernel_model"]


@pytest.mark.parametrize("entry, match", [
    ('{ model = "cache2", unit = "cells", b1 = 1e-7, b2 = 2e-7, s = 1e3 }',
     "tcell is a cache2 fit, whose time per unit depends on the work per call"),
    ('"fast"', "tcell = 'fast': expected seconds per cell-angle update"),
    ('{ model = "linear", t0 = 1e-6 }', "not a table of bsim fit kernel's linear model"),
    ('{ slope_small = 1e-7, slope_large = 2e-7, break_flops = 1e3 }', "a piecewise fit"),
    ('{ model = "linear", slope = 1e-7, fudge = 2.0 }', "not a table of bsim fit kernel's"),
])
def test_a_kernel_table_of_another_shape_is_one_line(tmp_path, capsys, entry, match):
    """A per-unit entry that is no number and no linear fit stops the run with exit status
    2 and one line naming the entry and the fix, not a traceback."""
    prof = tmp_path / "host.toml"
    prof.write_text(NETWORK_ONLY + f"[kernels.sweep3d]\ntcell = {entry}\n")
    args = ["run", "sweep3d", "--machine", str(prof), "--quiet"]
    for p in SWEEP_SMALL:
        args += ["--param", p]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err and "Traceback" not in err, err


@pytest.mark.parametrize("skeleton, param", [("milc_cg", "machine"), ("hpl", "kernel")])
def test_a_misspelt_machine_in_a_skeleton_parameter_is_refused_before_the_run(skeleton,
                                                                             param):
    """``--param machine=bgq`` (MILC) or ``kernel=bgq`` (HPL) names no machine: refused
    when the target loads, naming the parameter and the valid machines, as ``--machine``
    is (it stopped rank 0 at run time, and a sweep ran its other points first). A spec
    with parameters (``flat:rate=R``) is the skeleton's to read, and loads."""
    with pytest.raises(MachineError, match=rf"--param {param}=bgq: unknown machine 'bgq'; "
                                           r"valid machines: bgp, "):
        load_target(skeleton, {param: "bgq"}, None, None)
    assert load_target("hpl", {"kernel": "flat:rate=1e9"}, None, None).params["kernel"] == \
        "flat:rate=1e9"
    # a kind of spec the skeleton reads is its own to judge, even without parameters
    assert load_target("hpl", {"kernel": "flat"}, None, None).params["kernel"] == "flat"
