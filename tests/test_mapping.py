"""Rank -> (node, core) mappings: block, round-robin, explicit list and file, spec strings."""

from __future__ import annotations

import pytest

from netmodels.mapping import (
    BlockMapping,
    ExplicitMapping,
    MappingError,
    RoundRobinMapping,
    build_mapping,
)


def test_block():
    """block with 4 cores: rank 9 -> node 9//4 = 2, core 9%4 = 1."""
    m = BlockMapping(4)
    m.prepare(12)
    assert (m.node_of(9), m.core_of(9)) == (2, 1)
    assert m.nodes == [0] * 4 + [1] * 4 + [2] * 4
    assert m.node_count() == 3


def test_roundrobin():
    """roundrobin over 4 nodes: rank 9 -> node 9%4 = 1, core 9//4 = 2."""
    m = RoundRobinMapping(4)
    m.prepare(10)
    assert (m.node_of(9), m.core_of(9)) == (1, 2)
    assert m.ranks_per_node() == {0: 3, 1: 3, 2: 2, 3: 2}


def test_explicit_cores_in_rank_order():
    """[0,0,1,0]: cores count arrivals per node: 0,1,0,2."""
    m = ExplicitMapping([0, 0, 1, 0, 5])
    m.prepare(4)
    assert m.nodes == [0, 0, 1, 0]
    assert m.cores == [0, 1, 0, 2]


def test_explicit_too_short():
    """A list of 3 nodes cannot place 4 ranks."""
    with pytest.raises(MappingError, match="cannot place 4"):
        ExplicitMapping([0, 1, 2]).prepare(4)


def test_explicit_bad_entries():
    """Negative or non-int node ids are refused."""
    for bad in ([0, -1], [0, 1.5], [True]):
        with pytest.raises(MappingError):
            ExplicitMapping(bad)


def test_from_file(tmp_path):
    """One node id per line; comments and blank lines skipped."""
    path = tmp_path / "nodes.txt"
    path.write_text("# hostfile\n3\n3\n\n1  # comment\n0\n")
    m = build_mapping(f"file:{path}")
    m.prepare(4)
    assert m.nodes == [3, 3, 1, 0] and m.cores == [0, 1, 0, 0]


def test_from_file_bad_line(tmp_path):
    """A non-integer line is reported with its line number."""
    path = tmp_path / "nodes.txt"
    path.write_text("0\nnodeA\n")
    with pytest.raises(MappingError, match=r"nodes.txt:2"):
        ExplicitMapping.from_file(path)


def test_errors_before_prepare_and_out_of_range():
    """node_of needs prepare(); ranks outside [0, nranks) are refused."""
    m = BlockMapping(2)
    with pytest.raises(MappingError, match="prepare"):
        m.node_of(0)
    m.prepare(4)
    for rank in (-1, 4):
        with pytest.raises(MappingError, match="out of range"):
            m.core_of(rank)
    with pytest.raises(MappingError):
        m.prepare(0)


def test_build_mapping_specs():
    """Spec strings build the mapping they name, with machine defaults filled in."""
    assert build_mapping("block:cores=8").cores_per_node == 8
    assert build_mapping("block", cores_per_node=16).cores_per_node == 16
    assert build_mapping("roundrobin:nodes=4").node_total == 4
    assert build_mapping("roundrobin", nodes=64).node_total == 64
    nv = build_mapping("nodevolume:grid=4x2x1x1;node=2x2x1x1")
    nv.prepare(8)
    assert nv.nodes == [0, 0, 1, 1, 0, 0, 1, 1]


@pytest.mark.parametrize("spec", ["zigzag", "block", "roundrobin", "block:cores=x",
                                  "block:nodes=2", "file:", "block:cores"])
def test_build_mapping_errors(spec):
    """Unknown names, missing defaults and malformed keys raise MappingError."""
    with pytest.raises(MappingError):
        build_mapping(spec)
