"""Flat network models and spec strings."""

from __future__ import annotations

import pytest

import netmodels
from netmodels import Hockney, LogGP, NetworkSpecError, build_network


def test_hockney_cost_and_loggp_decomposition():
    """Hockney: l + s/w end to end; NIC busy s/w; no CPU overheads."""
    m = build_network("hockney:latency=4e-5,bandwidth=1e8")
    assert m == Hockney(latency=4e-5, bandwidth=1e8)
    assert m.cost(0, 1, 1000) == 4e-5 + 1000 / 1e8
    assert m.gap(0, 1000) == 1e-5 and m.send_overhead(1000) == 0.0
    assert m.cost(3, 3, 1000) == 0.0
    assert m.min_cost() == 4e-5


def test_loggp_cost_is_two_o_plus_bytes_plus_L():
    """LogGP: 2o + (s-1)G + L; gap max(g, (s-1)G); lookahead 2o + L."""
    m = LogGP(L=5e-6, o=1e-6, g=4e-6, G=1e-9)
    assert m.cost(0, 1, 1001) == pytest.approx(2e-6 + 1000e-9 + 5e-6, rel=1e-15)
    assert m.gap(0, 1001) == 4e-6 and m.gap(0, 10001) == pytest.approx(1e-5, rel=1e-15)
    assert m.cost(0, 1, 1001) == pytest.approx(m.send_overhead(1001) + m.wire(0, 1, 1001)
                                               + m.recv_overhead(1001), rel=1e-15)
    assert m.min_cost() == 2 * 1e-6 + 5e-6   # 2o + L


def test_spec_round_trip():
    """spec() rebuilds an equal model."""
    for spec in ("hockney:latency=1e-06,bandwidth=2e9", "loggp:L=1e-6,o=2e-7,g=0,G=3e-10"):
        m = build_network(spec)
        assert build_network(m.spec()) == m


@pytest.mark.parametrize("spec,match", [
    ("hockney:latency=-1", "latency must be a finite number >= 0"),
    ("hockney:bandwidth=0", "bandwidth must be a finite number > 0"),
    ("hockney:latency", "expected KEY=VALUE"),
    ("loggp:X=1", "unknown parameter.*X; valid: L"),
])
def test_bad_specs_are_explained(spec, match):
    """Out-of-range and malformed parameters raise NetworkSpecError."""
    with pytest.raises(NetworkSpecError, match=match):
        build_network(spec)


def test_registry_lists_flat_models():
    """The flat models are registered by name."""
    assert {"hockney", "loggp", "zero"} <= set(netmodels.REGISTRY)
