"""SAGE: the tutorial's slab algebra by hand, and the skeleton against its cycle model."""

from __future__ import annotations

import math

import pytest

import bsim
from skeletons.models import sage as model
from skeletons.sage import main as sage_main


def test_slab_geometry_by_hand():
    """E = 13,500 (the tutorial's example): the foil splits past P = sqrt(E/8) = 41.1."""
    g = model.slab_geometry(13500, 8)             # V = 108,000 = 47.6^3
    assert g.side == pytest.approx(108000 ** (1 / 3))
    assert g.foils == pytest.approx((13500 / 512) ** (1 / 3)) and g.foils > 1
    assert (g.ped, g.cells_x) == (1, 4)
    assert g.cells_z == round(108000 ** (2 / 3)) and g.cells_y == round(2 * 108000 ** (1 / 3))
    assert model.slab_geometry(13500, 41).ped == 1          # 41 < 41.08: still whole foils
    g = model.slab_geometry(13500, 42)                      # split: a share of a face
    assert (g.ped, g.cells_z) == (2, 6750)                   # ceil((8 42^2 / 13500)^(1/3))
    # PE distance ceil((8 P^2 / E)^(1/3)) at P = 512: (155.3)^(1/3) = 5.4 -> 6
    assert model.slab_geometry(13500, 512).ped == 6
    assert model.out_of_node(6, 4) == 4 and model.out_of_node(2, 4) == 2


@pytest.mark.parametrize("nprocs", [8, 48])
def test_skeleton_equals_the_cycle_model_without_contention(nprocs):
    """Hockney network, the BSIM paper's receive rule, clog allreduce: the slowest (an
    interior) processor's cycle is T_comp + T_mem + 160 GS(8 B) + 17 GS(4 B) + 3 (c + d log P),
    with whole foils (P = 8) and split ones 2 apart (P = 48)."""
    lat, bw, c, d = 5e-6, 340e6, 2e-6, 7e-6
    net = f"hockney:latency={lat},bandwidth={bw}"
    res = bsim.simulate(sage_main, nprocs, network=net, collectives=f"clog:c={c},d={d}",
                        kwargs=dict(cells=13500, cycles=2, t_cell=40e-6, t_mem=4.8e-6),
                        protocol="bsim")
    def m(nbytes: float) -> float:
        return lat + nbytes / bw

    expected = 2 * model.cycle_time(13500, nprocs, m, t_cell=40e-6, t_mem=4.8e-6,
                                    allreduces=3, c=c, d=d)
    assert res.elapsed == pytest.approx(expected, rel=1e-12)
    # messages sent per gather/scatter: X and Y to the neighbours 1 away, Z to those PED away
    ped = model.slab_geometry(13500, nprocs).ped
    per_gs = sum(2 * ((r > 0) + (r < nprocs - 1)) + (r >= ped) + (r + ped < nprocs)
                 for r in range(nprocs))
    assert res.total_messages == 2 * 177 * per_gs


def test_machine_sets_the_cell_time():
    """--machine es45: t_cell from [kernels.sage]; another machine: scaled by peak."""
    from bsim.cli.targets import load_target
    assert load_target("sage", {}, None, "es45").params["t_cell"] == 50e-6
    t = load_target("sage", {}, None, "bgp").params["t_cell"]
    assert t == pytest.approx(50e-6 * 2.0e9 / 3.4e9)
    assert math.isfinite(t)


def test_z_neighbours_beyond_the_ranks_are_refused():
    """E = 8 cells on P = 3: a processor holds (8 / (8 * 9))^(1/3) = 0.48 of a foil, so its
    Z partners are PED = ceil((8 * 9 / 8)^(1/3)) = 3 ranks away: outside the 3 ranks.  The
    skeleton exchanged no Z boundary while the model charged one (an outside review); both
    now refuse.  E = 64 on P = 3: 0.96 of a foil, PED = ceil((72 / 64)^(1/3)) = 2 < 3, kept."""
    with pytest.raises(ValueError, match=r"PED = 3 ranks away, outside the 3 ranks"):
        model.slab_geometry(8, 3)
    with pytest.raises(bsim.RankError, match=r"rank 0 raised ValueError: sage: cells=8 per "):
        bsim.simulate(sage_main, 3, kwargs=dict(cells=8, cycles=1), protocol="bsim")
    assert model.slab_geometry(64, 3).ped == 2
