"""sweep3d skeleton: wavefront timing against the tutorial's pipeline model (modeling tutorial).

Common case unless a test says otherwise: it = jt = 2 cells per rank, nz = 10,
mm = 2 angles per octant in blocks of mmi = 1, t_cell = 1 us, so
``Tcpu = it*jt*mk*mmi*t_cell = 4*mk us`` and ``Nsweep = (10/mk)*2``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import needs_mpiexec, run_mpiexec

import bsim
from bsim.cli.main import main as cli
from bsim.errors import RankError
from bsim.machines import network_spec
from skeletons.models import sweep3d as model
from skeletons.sweep3d import T_CELL_ES40, main, octant_directions

ROOT = Path(__file__).resolve().parents[1]
US = 1e-6
ZERO_COLL = "clog:c=0,d=0"          # a free allreduce, so elapsed is the sweep alone
NET = "hockney:latency=1e-05,bandwidth=100000000.0"   # Tmsg = 10 us + L * 10 ns


def run(px, py, mk, *, octants=1, iterations=1, it=2, jt=2, network="zero",
        protocol="bsim", collectives=ZERO_COLL):
    kw = dict(nx=it * px, ny=jt * py, nz=10, px=px, py=py, mm=2, mk=mk, mmi=1,
              t_cell=1e-6, iterations=iterations, octants=octants)
    return bsim.simulate(main, px * py, network=network, protocol=protocol, kwargs=kw,
                         collectives=collectives)


@pytest.mark.parametrize("px, py, mk, expected_us", [
    # ((px + py - 1) + (Nsweep - 1)) * Tcpu
    (2, 3, 2, (4 + 9) * 8),      # Nsweep = 5*2 = 10, Tcpu = 8 us
    (4, 4, 5, (7 + 3) * 20),     # Nsweep = 2*2 = 4, Tcpu = 20 us
    (3, 5, 10, (7 + 1) * 40),    # Nsweep = 1*2 = 2, Tcpu = 40 us
    (1, 4, 1, (4 + 19) * 4),     # Nsweep = 10*2 = 20, Tcpu = 4 us
    (6, 1, 2, (6 + 9) * 8),      # one row of processes
])
def test_one_octant_on_free_network_is_the_compute_pipeline(px, py, mk, expected_us):
    """Zero-cost network: one octant takes ((px+py-1) + (Nsweep-1)) Tcpu exactly."""
    res = run(px, py, mk)
    assert res.elapsed == pytest.approx(expected_us * US, rel=1e-12)
    nsweep = (10 // mk) * 2
    assert res.calc.min() == res.calc.max() == pytest.approx(nsweep * 4 * mk * US, rel=1e-12)


@pytest.mark.parametrize("px, py, mk, steps", [
    (2, 3, 2, 8 * 9 + 2 * 2 + 4 * 3 + 2),    # 8 (Nsweep-1) + (2 px + 4 py + 2) = 90
    (4, 4, 5, 8 * 3 + 2 * 4 + 4 * 4 + 2),    # = 50
    (5, 2, 10, 8 * 1 + 2 * 5 + 4 * 2 + 2),   # = 28 (asymmetric in px, py)
])
def test_eight_octants_follow_the_tutorial_octant_table(px, py, mk, steps):
    """Zero-cost network: an iteration takes 8 (Nsweep-1) + 2px + 4py + 2 steps of Tcpu."""
    res = run(px, py, mk, octants=8, iterations=2)
    assert res.elapsed == pytest.approx(2 * steps * 4 * mk * US, rel=1e-12)


@pytest.mark.parametrize("px, py, expected_us", [
    # Tcomp + Tcomm + Tred: Nsweep = 10, Tcpu = 8 us, Tmsg = 10 + 32 * 0.01 = 10.32 us
    (3, 3, (5 + 9) * 8 + (2 * 4 + 4 * 9) * 10.32 + 7),    # 112 + 454.08 + 7
    (4, 3, (6 + 9) * 8 + (2 * 5 + 4 * 9) * 10.32 + 7),    # 120 + 474.72 + 7
    (5, 4, (8 + 9) * 8 + (2 * 7 + 4 * 9) * 10.32 + 7),    # 136 + 516 + 7
])
def test_one_octant_equals_tutorial_model_when_sends_cost_tmsg(px, py, expected_us):
    """Hockney, send_cost = Tmsg: Tcomp + [2(px+py-2) + 4(Nsweep-1)] Tmsg, exactly.

    The tutorial charges Tmsg for each of the 2 receives and 2 sends of an
    interior process per wavefront (d = 4); px, py >= 3 so one exists.
    """
    res = run(px, py, 2, network=NET, protocol="bsim:send_cost=1.032e-05",
              collectives="clog:c=7e-6,d=0")
    assert res.elapsed == pytest.approx(expected_us * US, rel=1e-9)


def test_one_octant_receiver_pays_closed_form():
    """Default protocol (free sends), unequal faces: max-plus longest path, exactly.

    Every block costs Tcpu plus its receives; the longest path to the far corner
    takes one j-hop, px-1 i-hops at Ti+Tj, py-2 more j-hops at Tj, then Nsweep-1
    blocks at Ti+Tj:  (px+py+N-2) Tcpu + (px+N-2)(Ti+Tj) + (py-1) Tj.
    it=2, jt=3, mk=2: Tcpu = 12 us, i-face 3*2*8 = 48 B (Ti = 10.48 us),
    j-face 2*2*8 = 32 B (Tj = 10.32 us); px=3, py=4, N=10.
    """
    res = run(3, 4, 2, it=2, jt=3, network=NET)
    expected = 15 * 12 + 11 * (10.48 + 10.32) + 3 * 10.32      # 439.76 us
    assert res.elapsed == pytest.approx(expected * US, rel=1e-9)


@pytest.mark.parametrize("px, py, mk", [(4, 4, 10), (3, 5, 5)])
def test_es40_iteration_within_half_percent_of_tutorial_model(px, py, mk):
    """ES40 preset, 8 octants, send_cost = Tmsg: within 0.5% of the octant-table model.

    it = jt = 10, mm = 6, mmi = 3, nz = 100 (Tcpu = 360 us at mk = 10, Tmsg
    = 19.16 us).  The model composes the message pipeline across octant
    boundaries by rule (docs/models.md, choice 3) where the simulation follows
    the dependencies; the gap is a few percent of the message term.
    """
    it = jt = 10
    tmsg = model.tmsg(jt * mk * 3 * 8)
    kw = dict(nx=it * px, ny=jt * py, nz=100, px=px, py=py, mm=6, mk=mk, mmi=3)
    res = bsim.simulate(main, px * py, network=network_spec("es40"), kwargs=kw,
                        protocol=f"bsim:send_cost={tmsg!r}", collectives=ZERO_COLL)
    expected = model.iteration_time(px, py, 100, mk, 6, 3, it, jt)   # ES40 constants
    assert res.elapsed == pytest.approx(expected, rel=5e-3)


def test_messages_sizes_and_counts():
    """Each interior block sends jt*mk*mmi*8 bytes in i and it*mk*mmi*8 in j."""
    res = run(2, 2, 5, it=3, jt=4, octants=1)   # Nsweep = (10/5)*2 = 4
    # octant -i-j-k starts at rank 3 (i=1, j=1): 4 i-faces of 4*5*8 B, 4 j-faces of 3*5*8 B
    assert res.messages[3] == 4 + 4
    assert res.bytes[3] == 4 * (4 * 5 * 8) + 4 * (3 * 5 * 8)
    assert res.messages[0] == 0            # the far corner only receives


def test_octant_order_is_the_tutorials():
    """Octants: -i-j-k, -i-j+k, -i+j-k, -i+j+k, +i-j-k, ... (tutorial's octant table)."""
    names = [o[0] for o in octant_directions()]
    assert names == ["-i-j-k", "-i-j+k", "-i+j-k", "-i+j+k",
                     "+i-j-k", "+i-j+k", "+i+j-k", "+i+j+k"]
    assert octant_directions(1) == [("-i-j-k", -1, -1)]


def test_es40_preset_is_the_default_t_cell():
    """t_cell defaults to the ES40 preset's Tcell = 120 ns (modeling tutorial)."""
    assert T_CELL_ES40 == 120e-9


def test_bad_blocking_raises():
    """mk must divide nz: the run stops with the reason."""
    with pytest.raises(RankError, match="does not divide"):
        bsim.simulate(main, 4, network="zero",
                      kwargs=dict(nx=4, ny=4, nz=10, px=2, py=2, mk=3))


def test_cli_list_and_run(tmp_path, capsys):
    """`bsim list skeletons` shows sweep3d's parameters; `bsim run sweep3d` runs it."""
    assert cli(["list", "skeletons"]) == 0
    out = capsys.readouterr().out
    assert "sweep3d:" in out and "mmi" in out and "octants" in out
    path = tmp_path / "s.json"
    assert cli(["run", "sweep3d", "--param", "px=2", "--param", "py=3", "--param", "nx=4",
                "--param", "ny=6", "--param", "nz=10", "--param", "mm=2", "--param", "mmi=1",
                "--param", "mk=2", "--param", "t_cell=1e-6", "--param", "octants=1",
                "--network", "zero", "--json", str(path), "--quiet"]) == 0
    assert json.loads(path.read_text())["ranks"] == 6


@needs_mpiexec
def test_runs_under_real_mpiexec():
    """Under real mpiexec and mpi4py (add_time sleeping) the skeleton runs to completion."""
    code = ("from skeletons.sweep3d import main; from mpi4py import MPI; "
            "main(nx=6, ny=4, nz=8, px=3, py=2, mm=2, mk=2, mmi=1, t_cell=1e-6, iterations=2); "
            "print('done', MPI.COMM_WORLD.rank)")
    out = run_mpiexec(6, code, env={"BSIM_ADD_TIME": "sleep"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("done") == 6
