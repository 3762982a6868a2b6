"""Shared fixtures: hand-checkable network parameters."""

from __future__ import annotations

import pytest

LATENCY = 2e-6        # l, seconds
BANDWIDTH = 1e9       # w, bytes/second


@pytest.fixture
def hockney_spec() -> str:
    """Hockney with l = 2 us, w = 1 GB/s: a 1000-byte message costs 3 us."""
    return f"hockney:latency={LATENCY},bandwidth={BANDWIDTH}"
