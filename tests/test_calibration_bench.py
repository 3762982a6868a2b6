"""``calibrate network``'s measurement loops run inside bsim on a network of known
parameters: the fits must give those parameters back.

bsim's ``loggp`` protocol charges exactly the LogGP costs the fits assume
(``netmodels.flat.LogGP``: one-way ``2o + L + (s-1)G``, the sender's CPU busy
``o`` per send, its NIC ``max(g, (s-1)G)``), so every expected value here is a
parameter of the simulated network, not an output of the code under test.
The streams' busy work is ``bsim.add_time`` (a polled ``Wtime`` does not
advance inside bsim).
"""

from __future__ import annotations

import pytest

import bsim
from bsim.calibration.network_bench import fit_pair, measure_pair
from bsim.calibration.stats import Repetitions

pytest.importorskip("scipy")

L, OVH, GAP, G = 5e-6, 2e-6, 3e-6, 1e-9          # seconds, seconds, seconds, seconds/byte
NETWORK = f"loggp:L={L},o={OVH},g={GAP},G={G}"
SIZES = [0, 1, 4, 16, 64, 256, 1024, 4096, 16384]
RULE = Repetitions(min_reps=5, max_reps=5, batch=5, warmup=1)   # the times do not vary


def _measure(count: int = 16):
    def main():
        from mpi4py import MPI
        return measure_pair(MPI.COMM_WORLD, (0, 1), "intra", SIZES, RULE, stream_count=count,
                            busy=bsim.add_time)
    return bsim.simulate(main, ranks=2, network=NETWORK, protocol="loggp").returns[0]


@pytest.mark.parametrize("count", [2, 4, 16])
def test_stream_differences_are_the_netgauge_quantities(count):
    """gap(s) = max(o, g, (s-1)G) and o(s) = o exactly, for any stream length (the old
    loop waited d after the last send too: o(s) = (n+1)/(n-1) o, +13% at n = 16)."""
    res = _measure(count)
    for s, gap, ovh in zip(res.sizes, res.gaps(), res.overheads(), strict=True):
        assert gap == pytest.approx(max(OVH, GAP, max(s - 1, 0) * G), rel=1e-9), s
        assert ovh == pytest.approx(OVH, rel=1e-9), s


def test_loggp_fit_recovers_the_simulated_network():
    """L = 5 us, o = 2 us, g = 3 us, G = 1 ns/B back from the fit over all sizes (the
    review got L = 4.467, o = 2.267, g = 2.794 us); each size range gets L and o, and its
    g and G charge the measured gap max(g, (s-1)G) at every size of the range."""
    fits = fit_pair(_measure())
    f = fits.loggp_all
    assert f is not None and not f.o_capped
    assert (f.L, f.o, f.g, f.G) == pytest.approx((L, OVH, GAP, G), rel=1e-9)
    assert fits.loggp, fits.notes
    for r in fits.loggp:
        assert (r.L, r.o) == pytest.approx((L, OVH), rel=1e-9), r
        for s in SIZES:
            if (r.lo is None or s > r.lo) and (r.hi is None or s <= r.hi):
                assert max(r.g, max(s - 1, 0) * r.stream_G) == pytest.approx(
                    max(GAP, max(s - 1, 0) * G), rel=1e-9), (r, s)


def _calibrate(prof, ranks: int, sizes, count: int):
    """``calibrate network`` inside bsim: twolevel with 2 cores a node (4 ranks: an intra
    and an inter pair; 2 ranks: the intra pair only)."""
    from bsim.calibration.network_bench import calibrate_network

    def main():
        calibrate_network(sizes=sizes, rule=RULE, stream_count=count, profile=prof,
                          busy=bsim.add_time)
    bsim.simulate(main, ranks=ranks, network="twolevel:cores=2")


@pytest.mark.parametrize("tomlkit", [True, False], ids=["tomlkit", "regenerated"])
def test_a_rerun_leaves_no_stale_variants(tmp_path, monkeypatch, tomlkit):
    """Run 1 on two nodes with streams writes intra and inter Hockney, piecewise and LogGP
    variants; run 2 on one node, 3 sizes, no streams measures only the intra Hockney fit:
    the file keeps only that of what calibrate network owns, and the user's own variant
    and [hardware] key."""
    import sys

    from bsim.machines import load_machine
    if not tomlkit:
        monkeypatch.setitem(sys.modules, "tomlkit", None)     # import tomlkit fails
    prof = tmp_path / "host.toml"
    _calibrate(prof, 4, [0, 64, 1024, 8192, 65536, 262144], 4)
    first = load_machine(prof)
    assert {f"{fit}_{kind}" for fit in ("hockney", "piecewise", "loggp")
            for kind in ("intra", "inter")} | {"loggp_inter_small"} <= set(
        first.network_variants)
    assert "calibration_inter_flags" in first.hardware
    with prof.open("a") as fh:
        fh.write('\n[network_variants.mine]\nmodel = "hockney"\nlatency = 1e-6\n'
                 'bandwidth = 1e9\n')
    text = prof.read_text().replace("[hardware]\n", "[hardware]\nmemory_bandwidth_per_node = "
                                    "1e10\n")
    prof.write_text(text)
    _calibrate(prof, 2, [0, 64, 1024], 0)
    second = load_machine(prof)
    assert set(second.network_variants) == {"hockney_intra", "mine"}
    assert not [k for k in second.hardware if k.startswith("calibration_inter")]
    assert second.hardware["calibration_nodes"] == 1
    assert second.hardware["memory_bandwidth_per_node"] == 1e10
    assert second.network == second.network_variants["hockney_intra"]
    csv = (tmp_path / "host.network.csv").read_text().splitlines()[1:]
    assert csv and all(row.startswith("intra,") for row in csv)


@pytest.mark.parametrize("count", ["1", "0", "-3"])
def test_a_stream_count_below_two_is_refused(count, capsys):
    """--stream-count 1, 0 (which the library reads as --no-stream) or negative: gap(s)
    and o(s) divide by n - 1, so LogGP cannot be measured; every rank stops with exit
    status 2 and rank 0 prints one line (it was accepted and LogGP silently skipped). Run
    through the command line inside bsim on 2 ranks."""
    from bsim.calibration.errors import CalibrationError
    from bsim.calibration.network_bench import calibrate_network
    from bsim.cli import calibrate as cli

    def main():
        return cli.main(["calibrate", "network", "--profile", "", "--quick",
                         "--stream-count", count])
    assert bsim.simulate(main, ranks=2).returns == [2, 2]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err   # not once per rank
    assert err[0].startswith("bsim: error: --stream-count must be an integer >= 2")
    assert "--no-stream" in err[0]
    with pytest.raises(CalibrationError, match=">= 2"):
        calibrate_network(stream_count=1)


def test_no_stream_measures_no_loggp():
    """stream_count 0 (--no-stream) still means ping-pong only: no LogGP fit."""
    from bsim.calibration.network_bench import calibrate_network

    def main():
        cal = calibrate_network(sizes=[0, 64, 1024], rule=RULE, stream_count=0)
        return None if cal is None else (cal.fits["inter"].loggp_all, cal.fits["inter"].loggp)
    assert bsim.simulate(main, ranks=2).returns[0] == (None, [])


def test_python_m_prints_flags_as_one_line_warnings(monkeypatch, capsys):
    """python -m bsim.calibration prints a calibration's flags as 'bsim: warning: ...' (as the
    bsim command does), not as raw UserWarning lines. Run as __main__ inside bsim on 2 ranks
    of one node: --quick's 6 sizes always give the piecewise fit 0 degrees of freedom, a
    flag."""
    import runpy
    import sys
    import warnings
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)   # restored after
    monkeypatch.setattr(sys, "argv", ["bsim.calibration", "calibrate", "network", "--profile",
                                      "", "--quick", "--no-stream", "--min-reps", "5",
                                      "--max-reps", "5"])

    def main():
        try:
            runpy.run_module("bsim.calibration", run_name="__main__")
        except SystemExit as exc:
            return exc.code
        return None
    assert bsim.simulate(main, ranks=2, network="twolevel:cores=2").returns == [0, 0]
    err = capsys.readouterr().err.splitlines()
    assert any(ln.startswith("bsim: warning: calibrate network (intra-node): piecewise fit: "
                             "6 sizes") for ln in err), err
    assert not [ln for ln in err if "UserWarning" in ln or "warnings.warn" in ln], err
