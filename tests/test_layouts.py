"""NodeVolume layouts of the layout paper: ISP, SSN, node shapes and their rank->node map."""

from __future__ import annotations

import pytest

from netmodels.layouts import (
    NodeVolumeMapping,
    count_internode_pairs,
    isp,
    layout_cost,
    node_shapes,
    ssn,
)
from netmodels.mapping import MappingError


def test_isp_seed001_worked_example():
    """Q=(4,4,2,1), C=(1,1,2,2): z: 4*4*2*1 = 32, t: 4*4*2*2 = 64; ISP = 96 (layout paper 3.2)."""
    assert isp((4, 4, 2, 1), (1, 1, 2, 2)) == 96


def test_isp_uncut_is_zero():
    """One node (C = 1,1,1,1) has no inter-node pairs."""
    assert isp((4, 4, 4, 4), (1, 1, 1, 1)) == 0


def test_ssn_formula():
    """N=(4,4,2,1), S=(3,3,3,6): nvs=(12,12,6,6); 12*6*6*2 + 12*12*6*2 = 2592."""
    assert ssn((4, 4, 2, 1), (3, 3, 3, 6)) == 2592


def test_layout_cost():
    """alpha*ISP + (1-alpha)*SSN; alpha outside [0,1] is refused."""
    assert layout_cost(96, 2592, 0.25) == 0.25 * 96 + 0.75 * 2592
    with pytest.raises(ValueError):
        layout_cost(1, 1, 1.5)


def test_node_shapes_small():
    """Grid 2x2x1x1 with 2 cores per node: shapes 1x2x1x1 and 2x1x1x1."""
    assert list(node_shapes((2, 2, 1, 1), 2)) == [(1, 2, 1, 1), (2, 1, 1, 1)]


def test_node_shapes_count():
    """Grid 4x4x4x4, 4 cores: exponent 2 over 4 dims, each <= 2: C(5,3) = 10 shapes."""
    shapes = list(node_shapes((4, 4, 4, 4), 4))
    assert len(shapes) == 10
    assert all(a * b * c * d == 4 for a, b, c, d in shapes)


def test_node_shapes_respect_divisibility():
    """Grid 3x2x1x1, 2 cores: only 1x2x1x1 (2 does not divide 3)."""
    assert list(node_shapes((3, 2, 1, 1), 2)) == [(1, 2, 1, 1)]


def test_mapping_ranks_to_nodes():
    """Grid 4x2, node 2x2: rank 5=(1,1) -> node 0, core 1+2*1=3; rank 6=(2,1) -> node 1, core 2."""
    m = NodeVolumeMapping((4, 2, 1, 1), (2, 2, 1, 1))
    m.prepare(8)
    assert m.cut == (2, 1, 1, 1)
    assert (m.node_of(5), m.core_of(5)) == (0, 3)
    assert (m.node_of(6), m.core_of(6)) == (1, 2)
    assert m.ranks_per_node() == {0: 4, 1: 4}


@pytest.mark.parametrize("grid, node", [
    ((4, 4, 2, 2), (4, 4, 1, 1)),     # ISP = 2*4*4*2 + 2*4*4*2 = 128
    ((4, 4, 4, 4), (2, 2, 2, 2)),
    ((2, 4, 2, 8), (2, 4, 2, 2)),     # the layout paper Fig. 3 grid on 4 nodes of 32 cores
    ((6, 2, 3, 2), (3, 1, 3, 2)),
    ((2, 2, 2, 2), (1, 1, 1, 1)),     # every neighbour pair is inter-node: 4 * 16
])
def test_isp_matches_brute_force(grid, node):
    """The ISP formula equals counting neighbour pairs (periodic, +1 each way) on two nodes."""
    m = NodeVolumeMapping(grid, node)
    m.prepare(grid[0] * grid[1] * grid[2] * grid[3])
    assert m.isp() == count_internode_pairs(m)


def test_isp_values_by_hand():
    """Hand values of the parametrised cases: 128 and 4*16 = 64."""
    assert NodeVolumeMapping((4, 4, 2, 2), (4, 4, 1, 1)).isp() == 128
    assert NodeVolumeMapping((2, 2, 2, 2), (1, 1, 1, 1)).isp() == 64


def test_nodevolume_errors():
    """Non-dividing shapes, dimension mismatch and the wrong rank count are refused."""
    with pytest.raises(MappingError, match="divide"):
        NodeVolumeMapping((4, 4, 2, 2), (3, 1, 1, 1))
    with pytest.raises(MappingError, match="dimension"):
        NodeVolumeMapping((4, 4, 2, 2), (4, 4))
    with pytest.raises(MappingError, match="holds 64"):
        NodeVolumeMapping((4, 4, 2, 2), (4, 4, 1, 1)).prepare(32)
