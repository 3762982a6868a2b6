"""milc_cg and milc_rmd skeletons against the MILC paper's Eqs. 1-5 and the layout paper's layouts.

Hand-checked cases use a 16-rank run of an 8^4 lattice on MILC's balanced grid
2x2x2x2 (local 4^4, V = 256 sites), f = 4 bytes, so the su3 gathers are
A = 18*4*64 = 4608 B, A/2 = 2304 B and A/6 = 768 B in every dimension, on
Hockney l = 10 us, w = 1e8 B/s (m(x) = 10 us + x * 10 ns) with the allreduce
``c + d log2 P`` = 5 + 2*4 = 13 us.  BG/P kernels (MILC paper, Sec. IV-A) are
all in cache at V = 256: T(B) = b1 * 256.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import needs_mpiexec, run_mpiexec

import bsim
from bsim.cli.main import main as cli
from bsim.cli.targets import apply_mapping, load_target
from bsim.machines import collective_spec, load_machine, network_spec
from netmodels import build_network
from skeletons.milc import balanced_grid, cg_main, layout_mapping, rmd_main
from skeletons.models import milc as model

ROOT = Path(__file__).resolve().parents[1]
US = 1e-6
NET = "hockney:latency=1e-05,bandwidth=100000000.0"
COLL = "clog:allreduce.c=5e-06,allreduce.d=2e-06"
LATTICE = dict(nx=8, ny=8, nz=8, nt=8)


@pytest.mark.parametrize("lattice, nprocs, grid", [
    ((16, 16, 16, 16), 16, (2, 2, 2, 2)),
    # 32,32 cut first (x, then y), then x and y again (already cut), then z, t
    ((32, 32, 16, 16), 64, (4, 4, 2, 2)),
    # t (24) first; t again (cut); x, y, z (12, uncut, first first); x, y again
    ((12, 12, 12, 24), 128, (4, 4, 2, 4)),
    # largest prime first: 3 cuts t (24 is the largest extent divisible by 3)
    ((12, 12, 12, 24), 6, (2, 1, 1, 3)),
    ((8, 8, 8, 8), 1, (1, 1, 1, 1)),
])
def test_balanced_grid_is_milcs_setup_hyper_prime(lattice, nprocs, grid):
    """MILC's layout_hyper_prime: largest prime, largest extent, prefer cut dimensions."""
    assert balanced_grid(lattice, nprocs) == grid


def test_balanced_grid_refuses_a_lattice_without_factors():
    """A 3^4 lattice cannot be cut in two (MILC: not enough factors of 2)."""
    with pytest.raises(ValueError, match="not enough factors of 2"):
        balanced_grid((3, 3, 3, 3), 2)


def test_cg_by_hand():
    """milc_cg, 10 iterations over 2 invocations (Eq. 1, 3, 4 for CG only).

    iteration: 16 m(2304) + T(CG) + Tred = 16*33.04 + 3.04*256 + 13 = 1319.88 us
    start:     16 m(768) + Tred = 16*17.68 + 13 = 295.88 us
    total:     10*1319.88 + 2*295.88 = 13790.56 us
    """
    res = bsim.simulate(cg_main, 16, network=NET, collectives=COLL,
                        kwargs=dict(LATTICE, niters=10, invocations=2), protocol="bsim")
    assert res.elapsed == pytest.approx(13790.56 * US, rel=1e-12)
    assert res.messages.tolist() == [16 * 10 + 16 * 2] * 16
    assert res.bytes.tolist() == [16 * 10 * 2304 + 16 * 2 * 768] * 16
    assert res.calc.max() == pytest.approx(10 * 3.04 * 256 * US, rel=1e-12)


def test_rmd_by_hand():
    """milc_rmd equals Eq. 5 worked out by hand.

    trajecs=2, warms=1, steps=1, meas=2, niters=8: 3 steps, 1 measurement;
    calls FF=GF=3, LL=FL=3*3+1=10, CG 8 iterations, 2*3+2 = 8 invocations.
    Tser  = 3 (FF+GF+3(LL+FL)) + (LL+FL) + 8 CG,  with FF=1410*256, GF=483*256,
            LL=8.33*256, FL=178*256, CG=3.04*256 us      = 1937054.72 us
    Tp2p  = (3332*3 + 296) m(4608) + 16*8 m(2304) + 16*8 m(768)
          = 10292*56.08 + 128*33.04 + 128*17.68           =  583667.52 us
    Tcoll = (8 + 2 (3 + 2*1)) * 13                        =     234    us
    """
    res = bsim.simulate(rmd_main, 16, network=NET, collectives=COLL,
                        kwargs=dict(LATTICE, trajecs=2, warms=1, steps=1, meas=2, niters=8),
                        protocol="bsim")
    m = lambda x: 10 + x * 0.01                                        # noqa: E731, us
    tser = 3 * 256 * (1410 + 483 + 3 * (8.33 + 178)) + 256 * (8.33 + 178) + 8 * 256 * 3.04
    tp2p = (3332 * 3 + 296) * m(4608) + 16 * 8 * m(2304) + 16 * 8 * m(768)
    tcoll = (8 + 2 * (3 + 2 * 1)) * 13
    assert res.elapsed == pytest.approx((tser + tp2p + tcoll) * US, rel=1e-12)   # 2520956.24
    assert res.messages[0] == 10292 + 128 + 128


def test_unequal_extents_and_an_uncut_dimension():
    """Grid 4x2x1x2 on 8x4x4x8: local 2x2x4x4 (V = 64); z is not cut, so no z messages.

    A_d = 18*4*64/L_d = 2304, 2304, -, 1152 B.  One iteration, one invocation:
    start 4 (m(384)+m(384)+m(192)) = 4*39.6 = 158.4 us; iteration
    4 (m(1152)+m(1152)+m(576)) = 4*58.8 = 235.2 us; T(CG, 64) = 194.56 us;
    two allreduces of 13 us: 614.16 us.
    """
    kw = dict(nx=8, ny=4, nz=4, nt=8, px=4, py=2, pz=1, pt=2, niters=1)
    res = bsim.simulate(cg_main, 16, network=NET, collectives=COLL, kwargs=kw, protocol="bsim")
    assert res.elapsed == pytest.approx(614.16 * US, rel=1e-12)
    assert res.messages[0] == 2 * 12
    ext, grid = model.local_extents((8, 4, 4, 8), (4, 2, 1, 2)), (4, 2, 1, 2)
    bgp = load_machine("bgp").kernels["milc"]
    expected = model.cg_time(bgp["CG"], model.hockney(1e-5, 1e8), 1, 16, 5e-6, 2e-6,
                             extents=ext, grid=grid)
    assert res.elapsed == pytest.approx(expected, rel=1e-12)


def test_machine_and_float_size_parameters():
    """machine=xt5 takes XT5's CG fit; f=8 doubles every message.

    One rank, 8^4 sites: T(CG) = 0.66 us * 1000 + 1.37 us * 3096 = 4901.52 us.
    """
    res = bsim.simulate(cg_main, 1, network="zero", collectives="clog:c=0,d=0",
                        kwargs=dict(LATTICE, niters=2, machine="xt5"), protocol="bsim")
    assert res.calc[0] == pytest.approx(2 * 4901.52 * US, rel=1e-12)
    res4 = bsim.simulate(cg_main, 16, network="zero", kwargs=dict(LATTICE, niters=1),
                         protocol="bsim")
    res8 = bsim.simulate(cg_main, 16, network="zero", kwargs=dict(LATTICE, niters=1, f=8),
                         protocol="bsim")
    assert res8.bytes[0] == 2 * res4.bytes[0] == 2 * (16 * 2304 + 16 * 768)


def test_xt5_preset_network_and_collectives_match_the_cg_model():
    """XT5's Hockney network and clog(238 us, 51 us) preset: cg_time exactly."""
    lattice, grid = (16, 16, 16, 16), (2, 2, 2, 2)
    res = bsim.simulate(cg_main, 16, network=network_spec("xt5"),
                        collectives=collective_spec("xt5"),
                        kwargs=dict(nx=16, ny=16, nz=16, nt=16, niters=6, invocations=2,
                                    machine="xt5"), protocol="bsim")
    xt5 = load_machine("xt5")
    net = xt5.network
    expected = model.cg_time(xt5.kernels["milc"]["CG"],
                             model.hockney(net["latency"], net["bandwidth"]), 6, 16,
                             238e-6, 51e-6, calls=2,
                             extents=model.local_extents(lattice, grid), grid=grid)
    assert res.elapsed == pytest.approx(expected, rel=1e-12)


BGP = load_machine("bgp")
BGP_P64 = BGP.network_variants["p64"]


def bgp_allreduce() -> tuple[float, float]:
    """ASSUMED BG/P allreduce (MILC paper has no fit): c = 0, d = one 16-byte message."""
    return 0.0, BGP.network["latency"] + 16 / BGP.network["bandwidth"]


@pytest.mark.parametrize("which", ["cg", "rmd"])
def test_bgp_p64_equals_eq5(which):
    """BG/P, P = 64 (32x32x16x16, grid 4x4x2x2, V = 8^4): Eq. 5 (or its CG part) exactly.

    Every rank does the same work on a balanced grid, so the skeleton's elapsed time is
    Eq. 5's sum term by term (README: "equal ... to 1e-13"); only float summation order
    differs, hence rel = 1e-12 rather than a percentage.
    """
    lattice = (32, 32, 16, 16)
    grid = balanced_grid(lattice, 64)
    ext = model.local_extents(lattice, grid)
    c, d = bgp_allreduce()
    m = model.hockney(BGP_P64["latency"], BGP_P64["bandwidth"])
    kw = dict(nx=32, ny=32, nz=16, nt=16, niters=16)
    net, coll = network_spec(BGP, "p64"), f"clog:allreduce.c={c!r},allreduce.d={d!r}"
    if which == "cg":
        res = bsim.simulate(cg_main, 64, network=net, collectives=coll,
                            kwargs=dict(kw, invocations=2), protocol="bsim")
        expected = model.cg_time(BGP.kernels["milc"]["CG"], m, 16, 64, c, d, calls=2,
                                 extents=ext, grid=grid)
    else:
        res = bsim.simulate(rmd_main, 64, network=net, collectives=coll, kwargs=kw, protocol="bsim")
        expected = model.total_time(BGP.kernels["milc"], m, model.MilcRun(niters=16), 64,
                                    c, d, extents=ext, grid=grid)
    assert res.elapsed == pytest.approx(expected, rel=1e-12)


# -- layouts (layout paper) -------------------------------------------------------------

TWO = ("twolevel:cores=8,intra=hockney:latency=1e-06;bandwidth=1000000000.0,"
       "inter=hockney:latency=1e-05;bandwidth=100000000.0")


@pytest.mark.parametrize("layout, expected_us", [
    # 8x8x8x16 on 2x2x2x2: local 4x4x4x8, A/2 = 4608 B in x, y, z and 2304 B in t;
    # A/6 = 1536 B and 768 B.  intra m = 1 us + x/1e9, inter m = 10 us + x/1e8.
    # node 2x2x2x1 cuts t only: start 4 (3*2.536 + 17.68) = 101.152,
    # iteration 4 (3*5.608 + 33.04) = 199.456, T(CG, 512) = 1556.48, Tred 13
    ("2x2x2x1", 101.152 + 13 + 2 * (199.456 + 1556.48 + 13)),
    # node 1x2x2x2 cuts x: start 4 (25.36 + 2*2.536 + 1.768) = 128.8,
    # iteration 4 (56.08 + 2*5.608 + 3.304) = 282.4
    ("1x2x2x2", 128.8 + 13 + 2 * (282.4 + 1556.48 + 13)),
])
def test_layout_reaches_the_network(layout, expected_us):
    """layout=AxBxCxD sets the NodeVolume mapping of a twolevel network (16 ranks, 2 nodes)."""
    grid = {k: "2" for k in ("px", "py", "pz", "pt")}
    target = load_target("milc_cg", {"nx": "8", "ny": "8", "nz": "8", "nt": "16",
                                     "niters": "2", "layout": layout, **grid})
    assert target.ranks == 16
    assert target.mapping == f"nodevolume:grid=2x2x2x2;node={layout}"
    res = bsim.simulate(target.main, 16, network=target.network_for(TWO), collectives=COLL,
                        kwargs=target.params, protocol="bsim")
    assert res.elapsed == pytest.approx(expected_us * US, rel=1e-12)


def test_apply_mapping_rules():
    """apply_mapping appends, keeps an equal mapping, refuses conflicts and flat models."""
    m = "nodevolume:grid=2x2x2x2;node=2x2x2x1"
    assert apply_mapping(TWO, None) == TWO
    assert apply_mapping(TWO, m) == f"{TWO},mapping={m}"
    assert apply_mapping(f"{TWO},mapping={m}", m) == f"{TWO},mapping={m}"
    assert apply_mapping("torus", "block:cores=2") == "torus:mapping=block:cores=2"
    with pytest.raises(ValueError, match="give only one"):
        apply_mapping(f"{TWO},mapping=block", m)
    with pytest.raises(ValueError, match="'hockney' has none"):
        apply_mapping(NET, m)
    # a model object: its default mapping (block) counts as not given
    built = apply_mapping(build_network(TWO), m)
    assert built.endswith(f",mapping={m}") and built.count("mapping=") == 1


def test_layout_parameter_checks():
    """A NodeVolume must have 4 extents dividing the grid; other specs pass through."""
    assert layout_mapping("", (2, 2, 2, 2)) is None
    assert layout_mapping("block:cores=4", (2, 2, 2, 2)) == "block:cores=4"
    with pytest.raises(ValueError, match="not a NodeVolume"):
        layout_mapping("3x1x1x1", (2, 2, 2, 2))


def test_cli_runs_milc_with_a_layout(tmp_path, capsys):
    """`bsim run milc_cg --param layout=...` puts the mapping into the network spec."""
    out = tmp_path / "m.json"
    assert cli(["run", "milc_cg", "--param", "niters=2", "--param", "layout=2x2x2x1",
                "--network", TWO, "--json", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert "mapping=nodevolume:grid=2x2x2x2;node=2x2x2x1" in doc["network"]
    assert cli(["list", "skeletons"]) == 0
    listing = capsys.readouterr().out
    for text in ("milc_cg:", "milc_rmd:", "invocations", "trajecs", "layout", "'bgp'"):
        assert text in listing


@needs_mpiexec
def test_runs_under_real_mpiexec():
    """Both skeletons run to completion under real mpiexec + mpi4py (p_x = p_y = 2)."""
    code = ("from skeletons.milc import cg_main, rmd_main; from mpi4py import MPI; "
            "g = dict(nx=4, ny=4, nz=2, nt=2, px=2, py=2, pz=1, pt=1); "
            "cg_main(niters=3, invocations=2, **g); "
            "rmd_main(niters=4, trajecs=1, steps=1, **g); print('done', MPI.COMM_WORLD.rank)")
    out = run_mpiexec(4, code, env={"BSIM_ADD_TIME": "sleep", "BSIM_ADD_TIME_SCALE": "0.01"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("done") == 4


# -- Eq. 5 from the command line, on every machine of the MILC paper ------------------

EQ5_VARIANTS = {   # machine -> (variant, the paper's message time m(x) for it)
    "bgp": ("p2048", None), "xt5": ("p1024", None), "xe6": ("p2048", None),
    "ds1": ("p1024", None), "power5": (None, model.power5_message_time),
}


@pytest.mark.parametrize("skeleton", ["milc_rmd", "milc_cg"])
@pytest.mark.parametrize("machine", sorted(EQ5_VARIANTS))
def test_cli_with_the_variant_equals_eq5_on_every_machine(machine, skeleton, tmp_path):
    """``bsim run milc_rmd --machine M:VARIANT`` equals Eq. 5 (``total_time``; CG:
    ``cg_time``) with that machine's kernel table, the paper's network model for it (the
    ``pN`` effective Hockney fit, or POWER5+'s mixed LogGP of Sec. III-C 2, which is its
    default network) and its allreduce fit ``c + d log2 P``.  BG/P and ds1 have no fit:
    their analytic allreduce of 16 bytes is recursive doubling, log2 P messages of 16 B,
    i.e. ``c = 0``, ``d = m(16)``.  16 ranks on 16^4 (V = 8^4, every rank alike)."""
    variant, paper_m = EQ5_VARIANTS[machine]
    spec = f"{machine}:{variant}" if variant else machine
    out = tmp_path / "r.json"
    params = ["nx=16", "ny=16", "nz=16", "nt=16", "niters=8"]
    args = ["run", skeleton, "--machine", spec, "--protocol", "bsim", "--quiet", "--json",
            str(out)]
    for p in params:
        args += ["--param", p]
    assert cli(args) == 0
    result = json.loads(out.read_text())
    assert result["machine"] == spec
    m_table = load_machine(machine)
    if paper_m is None:
        net = m_table.network_variants[variant]
        m = model.hockney(net["latency"], net["bandwidth"])
    else:
        m = paper_m
    fit = m_table.collectives.get("allreduce")
    c, d = (fit["c"], fit["d"]) if fit else (0.0, m(16))
    lattice, grid = (16, 16, 16, 16), balanced_grid((16, 16, 16, 16), 16)
    ext = model.local_extents(lattice, grid)
    kernels = m_table.kernels["milc"]
    if skeleton == "milc_cg":
        expected = model.cg_time(kernels["CG"], m, 8, 16, c, d, calls=1, extents=ext,
                                 grid=grid)
    else:
        expected = model.total_time(kernels, m, model.MilcRun(niters=8), 16, c, d,
                                    extents=ext, grid=grid)
    assert result["elapsed"] == pytest.approx(expected, rel=1e-12)


def test_a_per_p_network_at_another_rank_count_is_warned_of():
    """``bgp:p4096`` is the MILC paper's effective network observed at P = 4,096 (Sec. IV-A,
    congestion included): run at 16 ranks it is warned of (it ran silently: an outside
    review); ``bgp:p64`` at 64 ranks, or ``bgp`` (the ideal model), is not."""
    import warnings

    from bsim.machines.layout import FittedAtOtherCountWarning

    def main():
        bsim.MPI.COMM_WORLD.Barrier()

    with pytest.warns(FittedAtOtherCountWarning, match=r"'p4096' was fitted at 4,096 "
                                                       r"processes .*this run has 16 ranks"):
        bsim.simulate(main, 16, machine="bgp:p4096", protocol="bsim")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FittedAtOtherCountWarning)
        bsim.simulate(main, 64, machine="bgp:p64", protocol="bsim")
        bsim.simulate(main, 16, machine="bgp", protocol="bsim")
