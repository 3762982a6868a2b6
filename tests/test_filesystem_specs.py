"""File-system specs are numbers: finite, whole where they count (``docs/io.md``,
``netmodels/filesystem.py``)."""

from __future__ import annotations

import pytest

import bsim
from netmodels.filesystem import build_filesystem
from netmodels.spec import SpecError


@pytest.mark.parametrize("item, why", [
    ("latency=nan", "latency must be a finite number >= 0, got nan"),
    ("metadata=nan", "metadata must be a finite number >= 0, got nan"),
    ("metadata=inf", "metadata must be a finite number >= 0, got inf"),
    ("ost_bandwidth=inf", "ost_bandwidth must be a finite number >= 0, got inf"),
    ("client_bandwidth=-1", "client_bandwidth must be a finite number >= 0, got -1"),
    ("aggregate_bandwidth=nan", "aggregate_bandwidth must be a finite number"),
    ("stripe_size=1e400", "stripe_size must be a finite number >= 0, got inf"),
    ("aggregators=inf", "aggregators must be a finite number >= 0, got inf"),
    ("aggregators=2.5", "aggregators must be a whole number, got 2.5"),
    ("stripe_count=1.5", "stripe_count must be a whole number, got 1.5"),
    ("stripe_size=1000.5", "stripe_size must be a whole number, got 1000.5"),
    ("stripe_count=2001", "stripe_count must be <= 2000"),
    ("latency=true", "latency must be a finite number >= 0, got True"),
])
def test_file_system_numbers_are_finite(item, why):
    """Every numeric parameter refuses NaN, infinity and negatives; counts and sizes
    refuse fractions; one line naming the parameter and the value."""
    with pytest.raises(SpecError, match=why.replace("(", r"\(")) as info:
        build_filesystem(f"lustre:{item}")
    assert "\n" not in str(info.value)


def test_whole_parameters_given_as_floats_are_kept_as_ints():
    """``aggregators=2.0`` is 2 (a count), and the spec says so."""
    fs = build_filesystem("lustre:aggregators=2.0,stripe_count=4.0")
    assert fs.aggregator_count(16) == 2 and fs.targets() == 4
    assert "aggregators=2" in fs.spec() and "aggregators=2.0" not in fs.spec()


def test_a_nan_file_system_is_refused_before_the_run():
    """simulate() refuses a NaN latency (before: a run of 8 us recorded as latency=nan)."""
    with pytest.raises(SpecError, match="latency must be a finite number"):
        bsim.simulate(lambda: None, 2, filesystem="lustre:latency=nan,metadata=nan")
