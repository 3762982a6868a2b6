"""Fitting: statistics, network fits, kernel fits and profile files, on synthetic data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bsim.calibration.errors import CalibrationError, FitError
from bsim.calibration.kernels import fit_kernel, kernel_time, read_kernel_csv
from bsim.calibration.netfit import fit_hockney, fit_loggp, fit_piecewise
from bsim.calibration.profile import dumps_toml, read_profile, update_profile
from bsim.calibration.stats import Repetitions, isotonic, median_ci, summarize
from bsim.cli import calibrate as cli

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]

pytest.importorskip("scipy")

SIZES = np.array([0, 8, 32, 64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20])


def noisy(t, rel, seed):
    """Multiplicative Gaussian noise of relative sigma *rel*, seeded."""
    return t * (1 + rel * np.random.default_rng(seed).standard_normal(np.shape(t)))


# -- statistics ------------------------------------------------------------------------

def test_summary_of_literal_samples():
    """Median, quartiles, MAD and Tukey outliers of 1..9 plus one far sample."""
    s = summarize([1, 2, 3, 4, 5, 6, 7, 8, 9, 100])
    assert s.n == 10 and s.median == 5.5
    assert (s.q1, s.q3) == (3.25, 7.75)          # numpy linear interpolation
    assert s.mad == 2.5                          # |x - 5.5|: median of 0.5,0.5,1.5,... = 2.5
    assert s.outliers == 1                       # 100 > 7.75 + 1.5 * 4.5
    assert s.minimum == 1 and s.maximum == 100


def test_median_ci_order_statistics():
    """n = 10: ranks floor(5 - 3.10) = 1 and ceil(6 + 3.10) = 10 (Le Boudec, Thm. 2.1)."""
    assert median_ci(list(range(1, 11))) == (1.0, 10.0)
    lo, hi = median_ci(list(range(1, 101)))      # ranks 40 and 61
    assert (lo, hi) == (40.0, 61.0)
    assert math.isinf(summarize([1, 2, 3]).rel_ci)


def test_isotonic_pools_violators():
    """Pool adjacent violators: the least-squares non-decreasing sequence."""
    assert isotonic([1, 3, 2, 4]) == [1, 2.5, 2.5, 4]
    assert isotonic([3, 2, 1]) == [2, 2, 2]
    assert isotonic([1, 2, 3]) == [1, 2, 3]


def test_repetitions_stop_rule():
    """Stop at max_reps, never before min_reps, early once the median interval is tight."""
    rule = Repetitions(min_reps=10, max_reps=50, rel_ci=0.05, max_seconds=10)
    assert not rule.done([1.0] * 9, 0.0)
    assert rule.done([1.0] * 10, 0.0)                       # zero spread
    spread = list(np.linspace(0.5, 1.5, 20))
    assert not rule.done(spread, 0.0)
    assert rule.done(spread, 11.0)                          # time budget
    assert rule.done(spread * 3, 0.0) is True               # 60 >= max_reps
    with pytest.raises(CalibrationError, match="max_reps"):
        Repetitions(min_reps=10, max_reps=5)


# -- network fits ------------------------------------------------------------------------

def test_hockney_exact_and_noisy():
    """l = 2 us, w = 5 GB/s come back exactly without noise, within 3 % with 2 % noise."""
    t = 2e-6 + SIZES / 5e9
    exact = fit_hockney(SIZES, t)
    assert exact.latency == pytest.approx(2e-6, rel=1e-9)
    assert exact.bandwidth == pytest.approx(5e9, rel=1e-9)
    fit = fit_hockney(SIZES, noisy(t, 0.02, seed=1))
    assert fit.latency == pytest.approx(2e-6, rel=0.03)
    assert fit.bandwidth == pytest.approx(5e9, rel=0.03)
    assert 0 < fit.rel_residual < 0.03
    assert fit.table() == {"model": "hockney", "latency": fit.latency,
                           "bandwidth": fit.bandwidth}


def tutorial_tmsg(s):
    """Modeling tutorial: 5 us up to 32 B; 5 us + 15 ns/B up to 1024 B; 10 us + 3.4 ns/B above."""
    s = np.asarray(s, float)
    return np.where(s <= 32, 5e-6, np.where(s <= 1024, 5e-6 + 15e-9 * s, 10e-6 + 3.4e-9 * s))


def test_piecewise_recovers_tutorial_breaks():
    """Least-squares breakpoints land on 32 and 1024 B; parameters within 3 % (1 % noise)."""
    fit = fit_piecewise(SIZES, noisy(tutorial_tmsg(SIZES), 0.01, seed=2))
    assert fit.breaks == (32, 1024)
    for got, want in zip(fit.t0, (5e-6, 5e-6, 10e-6), strict=True):
        assert got == pytest.approx(want, rel=0.03)
    assert fit.tb[0] < 1e-9                                  # flat first piece
    assert fit.tb[1] == pytest.approx(15e-9, rel=0.05)
    assert fit.tb[2] == pytest.approx(3.4e-9, rel=0.03)
    table = fit.table()
    assert table["model"] == "piecewise" and table["breaks"] == "32/1024"
    assert len(table["t0"].split("/")) == 3 and "," not in table["tb"]


def test_loggp_two_ranges_recovered():
    """Synthetic LogGP per range (MILC paper's POWER5+ intra rows) comes back within 5 %."""
    rows = {"small": dict(L=2.7e-6, o=3.5e-6, g=3.0e-6, G=0.68e-9),
            "large": dict(L=2.7e-6, o=3.5e-6, g=3.0e-6, G=0.45e-9)}
    s = np.array([0, 64, 1024, 8192, 32768, 65536, 262144, 1 << 20])

    def param(key):
        return np.where(s <= 32768, rows["small"][key], rows["large"][key])
    bt = np.maximum(s - 1, 0)
    half = 2 * param("o") + param("L") + bt * param("G")
    gap = np.maximum(param("g"), bt * param("G"))   # the NIC time bsim's LogGP charges
    over = noisy(param("o"), 0.01, seed=3)
    small, large = fit_loggp(s, noisy(half, 0.005, 4), noisy(gap, 0.005, 5), over, [32768])
    for fit, want in ((small, rows["small"]), (large, rows["large"])):
        for key in ("o", "G"):
            assert getattr(fit, key) == pytest.approx(want[key], rel=0.05), key
        assert fit.L == pytest.approx(want["L"], rel=0.1)
        assert not fit.o_capped and fit.rel_residual < 0.02
        inside = (s <= 32768) if fit is small else (s > 32768)
        charged = np.maximum(fit.g, bt[inside] * fit.stream_G)
        assert charged == pytest.approx(gap[inside], rel=0.05)
    # g shows only where (s-1)G < g (0, 64, 1024 B); above 32 KiB every size streams at
    # (s-1)G, and any g up to 64 KiB x G charges the same
    assert small.g == pytest.approx(rows["small"]["g"], rel=0.05)
    assert small.describe() == "0 <= S <= 32768 bytes" and large.hi is None


def test_loggp_overhead_capped_when_send_copies():
    """o(s) larger than the ping-pong allows is capped at half the intercept; cost still fits."""
    s = np.array([0, 1024, 4096, 16384])
    half = 1e-6 + np.maximum(s - 1, 0) * 1e-10      # LogGP counts (s-1) bytes
    fit, = fit_loggp(s, half, 0.8 * half, np.full(4, 5e-6))
    assert fit.o_capped and fit.o == pytest.approx(0.5e-6, rel=1e-6)
    assert fit.L == pytest.approx(0, abs=1e-12)
    assert fit.rel_residual < 1e-9


# -- kernel fits ---------------------------------------------------------------------------

def test_linear_flop_rate():
    """t = 1 us + F / 2 GFlop/s: rate within 1 %, t0 within 10 % (1 % noise, 5 repetitions)."""
    f = np.repeat(np.geomspace(1e4, 1e8, 9), 5)
    fit = fit_kernel(f, noisy(1e-6 + f / 2e9, 0.01, 6), "linear", unit="flops")
    assert fit.table()["rate"] == pytest.approx(2e9, rel=0.01)
    assert fit.params["t0"] == pytest.approx(1e-6, rel=0.1)
    assert fit.rel_residual < 0.02 and 0 < fit.variation < 0.03


def test_piecewise_seed004_dgemm():
    """0.173 / 0.165 ns/flop split at 10 MFlop (BSIM paper): slopes to 1 %, break within 25 %."""
    f = np.repeat(np.geomspace(1e5, 1e9, 17), 3)
    t = np.where(f <= 1e7, 0.173e-9 * f, 0.173e-9 * 1e7 + 0.165e-9 * (f - 1e7))
    fit = fit_kernel(f, noisy(t, 0.005, 7), "piecewise", unit="flops")
    assert fit.params["slope_small"] == pytest.approx(0.173e-9, rel=0.01)
    assert fit.params["slope_large"] == pytest.approx(0.165e-9, rel=0.01)
    assert fit.params["break_flops"] == pytest.approx(1e7, rel=0.25)
    assert {"slope_small_var", "slope_large_var", "rel_residual"} <= set(fit.table())


def test_piecewise_proportional_reading():
    """continuous=False: 0.173 ns/flop up to 10 MFlop, 0.165 ns/flop times all flops above."""
    f = np.geomspace(1e5, 1e9, 13)
    t = np.where(f <= 1e7, 0.173e-9 * f, 0.165e-9 * f)
    fit = fit_kernel(f, t, "piecewise", continuous=False, unit="flops")
    assert fit.params["slope_small"] == pytest.approx(0.173e-9, rel=1e-9)
    assert fit.params["slope_large"] == pytest.approx(0.165e-9, rel=1e-9)
    assert fit.params["break_flops"] == pytest.approx(1e7, rel=0.01)
    assert fit.time(2e9) == pytest.approx(0.165e-9 * 2e9)


def test_cache2_seed000_eq1():
    """Eq. 1 with FF on POWER5+ (b1 = 255 us, b2 = 326 us, s = 2500): within 2 %, s within 5 %."""
    v = np.repeat(np.array([256, 512, 1024, 1536, 2048, 3000, 4096, 6561, 8192, 16384,
                            20736]), 4)
    t = 255e-6 * np.minimum(2500, v) + 326e-6 * np.maximum(0, v - 2500)
    fit = fit_kernel(v, noisy(t, 0.005, 8), "cache2", unit="sites")
    assert fit.params["b1"] == pytest.approx(255e-6, rel=0.02)
    assert fit.params["b2"] == pytest.approx(326e-6, rel=0.02)
    assert fit.params["s"] == pytest.approx(2500, rel=0.05)
    table = fit.table()
    assert table["model"] == "cache2" and table["unit"] == "sites"
    assert all(table[k] > 0 for k in ("b1_var", "b2_var", "s_var"))
    assert kernel_time(table, 10000) == pytest.approx(fit.time(10000))
    assert "relative residual" in fit.report() and "Eq. 1" in fit.report()


def test_kernel_time_reads_preset_tables():
    """Untagged preset tables evaluate as their seeds' models."""
    from bsim.machines import load_machine
    from skeletons.models import hpl, milc
    dgemm = load_machine("primequest").kernels["flops"]["dgemm"]
    # the BSIM paper: 0.173 ns/flop for the first 10 MFlop, 0.165 ns/flop beyond
    assert kernel_time(dgemm, 3e7) == pytest.approx(0.173e-9 * 1e7 + 0.165e-9 * 2e7, rel=1e-12)
    assert kernel_time(dgemm, 3e7) == pytest.approx(hpl.dgemm_time(3e7), rel=1e-12)
    cg = load_machine("power5").kernels["milc"]["CG"]
    # the MILC paper Eq. 1, POWER5+ CG: 1200 sites at 0.425 us, the other 2896 at 0.483 us
    assert kernel_time(cg, 4096) == pytest.approx(0.425e-6 * 1200 + 0.483e-6 * 2896, rel=1e-12)
    assert kernel_time(cg, 4096) == pytest.approx(milc.kernel_time(0.425e-6, 0.483e-6, 1200,
                                                                   4096), rel=1e-12)
    with pytest.raises(FitError, match="unknown kernel table"):
        kernel_time({"alpha": 1}, 1)


@pytest.mark.parametrize("x,t,match", [
    ([1, 2], [1e-6, 2e-6], "too few points: need >= 3, got 2"),
    ([1, 2, 3], [1e-6, -2e-6, 3e-6], "negative time"),
    ([1, 2, 3], [1e-6, 0.0, 3e-6], "zero time"),
    ([1, 3, 2], [1e-6, 3e-6, 2e-6], "must be non-decreasing: 2 after 3"),
    ([1, 2, float("nan")], [1e-6, 2e-6, 3e-6], "finite number >= 0"),
    ([5, 5, 5], [1e-6, 2e-6, 3e-6], "too few distinct"),
])
def test_kernel_nonsense_input(x, t, match):
    """Bad data raises FitError naming the problem."""
    with pytest.raises(FitError, match=match):
        fit_kernel(x, t, "linear")


def test_network_nonsense_input():
    """Network fits: repeated sizes, flat times and too few sizes per piece are refused."""
    with pytest.raises(FitError, match="must be increasing"):
        fit_hockney([0, 8, 8, 16], [1e-6] * 4)
    with pytest.raises(FitError, match="bandwidth not identifiable"):
        fit_hockney([0, 8, 16], [3e-6, 2e-6, 1e-6])
    with pytest.raises(FitError, match="need >= 6, got 5"):
        fit_piecewise([0, 1, 2, 3, 4], [1e-6] * 5)
    with pytest.raises(FitError, match="unknown weighting"):
        fit_hockney([0, 8, 16], [1e-6, 2e-6, 3e-6], weighting="loud")
    with pytest.raises(FitError, match="unknown kernel model"):
        fit_kernel([1, 2, 3], [1, 2, 3], "cubic")


def test_kernel_csv_errors_name_line(tmp_path):
    """CSV problems name the file and line."""
    bad = tmp_path / "k.csv"
    bad.write_text("cells,seconds\n10,1e-6\n# comment\n20,-1e-6\n")
    with pytest.raises(FitError, match=r"k.csv: line 4 \(cells 20\): negative time"):
        read_kernel_csv(bad)
    bad.write_text("cells,seconds\n20,1e-6\n10,2e-6\n")
    with pytest.raises(FitError, match="line 3 .*sort the data"):
        read_kernel_csv(bad)
    bad.write_text("size,time\n1,2\n")
    with pytest.raises(FitError, match="need a 'seconds' column"):
        read_kernel_csv(bad)
    bad.write_text("flops,seconds\n1e6,abc\n")
    with pytest.raises(FitError, match="k.csv:2: expected numbers"):
        read_kernel_csv(bad)


# -- profile files ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["power5", "primequest", "es45", "bluewaters", "xt5"])
def test_toml_writer_round_trips_presets(name):
    """dumps_toml of a preset parses back to the same data."""
    from bsim.machines import MACHINE_DIR
    data = tomllib.loads((MACHINE_DIR / f"{name}.toml").read_text())
    assert tomllib.loads(dumps_toml(data)) == data


def test_fit_kernel_cli_writes_profile(tmp_path, capsys):
    """bsim fit kernel: prints the fit, merges [kernels.APP] KERNEL, keeps the rest."""
    from bsim.machines import load_machine
    prof = tmp_path / "m.toml"
    prof.write_text('name = "m"\ndescription = "d"\nsource = "s"\ncores_per_node = 2\n'
                    '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n')
    data = tmp_path / "dgemm.csv"
    f = np.repeat(np.geomspace(1e5, 1e9, 9), 2)
    t = noisy(np.where(f <= 1e7, 0.173e-9 * f, 0.173e-9 * 1e7 + 0.165e-9 * (f - 1e7)), 0.002, 9)
    data.write_text("flops,seconds\n" + "".join(f"{a},{float(b)!r}\n" for a, b in zip(f, t,
                                                                                strict=True)))
    rc = cli.main(["fit", "kernel", str(data), "--model", "piecewise", "--profile", str(prof),
                   "--app", "flops", "--kernel", "dgemm"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "slope_small" in out and "relative residual" in out and "wrote [kernels.flops]" in out
    m = load_machine(prof)
    entry = m.kernels["flops"]["dgemm"]
    assert entry["model"] == "piecewise" and entry["unit"] == "flops"
    assert entry["slope_small"] == pytest.approx(0.173e-9, rel=0.02)
    assert m.network == {"model": "hockney", "latency": 1e-6, "bandwidth": 1e9}


def test_fit_kernel_cli_error_exit(tmp_path, capsys):
    """A bad CSV gives exit status 2 and one clear message."""
    data = tmp_path / "k.csv"
    data.write_text("cells,seconds\n1,1e-6\n2,-1\n")
    assert cli.main(["fit", "kernel", str(data), "--model", "linear"]) == 2
    assert "negative time" in capsys.readouterr().err


def test_update_profile_merges_tables(tmp_path):
    """Kernels-only file, then network: both kept; the file loads as a machine."""
    from bsim.machines import load_machine
    prof = tmp_path / "p.toml"
    update_profile(prof, subtables={"kernels.app": {"step": {"model": "linear", "t0": 0.0,
                                                             "slope": 1e-9}}})
    assert read_profile(prof) == {"kernels": {"app": {"step": {"model": "linear", "t0": 0.0,
                                                               "slope": 1e-9}}}}
    update_profile(prof, top_defaults={"name": "x", "description": "d", "source": "s",
                                       "cores_per_node": 2},
                   tables={"network": {"model": "hockney", "latency": 1e-6,
                                       "bandwidth": 1e9}},
                   subtables={"network_variants": {"a": {"model": "zero"}}})
    update_profile(prof, top_defaults={"name": "ignored"}, top={"source": "new"})
    m = load_machine(prof)
    assert m.name == "x" and m.source == "new" and "a" in m.network_variants
    assert m.kernels["app"]["step"]["slope"] == 1e-9


def test_updating_a_profile_keeps_the_users_comments(tmp_path):
    """A hand-edited profile: `fit kernel` and a network update change their own values and
    keep the user's comments and keys elsewhere (tomlkit)."""
    pytest.importorskip("tomlkit")
    path = tmp_path / "m.toml"
    path.write_text('# my cluster, measured by hand in May\n'
                    'name = "mine"\ndescription = "d"\nsource = "s"\ncores_per_node = 4  # 2 x 2\n'
                    '\n[network]\nmodel = "hockney"\nlatency = 2e-6   # from the vendor\n'
                    'bandwidth = 1e9\n\n[hardware]\nnote = "keep me"  # mine\n')
    update_profile(path, subtables={"kernels.jacobi2d": {"step": {"model": "linear",
                                                                  "t0": 1e-5, "slope": 2e-9}}})
    text = path.read_text()
    assert "# my cluster, measured by hand in May" in text and "# from the vendor" in text
    assert '# mine' in text and "# 2 x 2" in text
    data = read_profile(path)
    assert data["kernels"]["jacobi2d"]["step"] == {"model": "linear", "t0": 1e-5, "slope": 2e-9}
    assert data["network"]["latency"] == 2e-6 and data["hardware"]["note"] == "keep me"
    update_profile(path, tables={"network": {"model": "hockney", "latency": 3e-6,
                                             "bandwidth": 5e8}},
                   comments={"network.latency": "fitted"})
    text = path.read_text()
    assert "# my cluster" in text and "# mine" in text and "# fitted" in text
    assert read_profile(path)["network"]["latency"] == 3e-6


def test_fits_without_degrees_of_freedom_show_no_residual():
    """--quick's 6 sizes: 3 pieces x (t0, tb) = 6 parameters, dof = 0; the pieces pass
    through 30%-noisy points exactly, so the residual (~1e-14 %) is nan and flagged, not
    reported as a perfect fit. LogGP ranges of 2 sizes likewise (dof = 2 - 2); the
    Hockney line keeps 6 - 2 = 4 dof, and 13 sizes leave the piecewise fit 13 - 6 = 7."""
    from bsim.calibration.network_bench import QUICK_SIZES
    from bsim.calibration.quality import dof_flags, residual_text
    s = np.array(QUICK_SIZES, float)
    t = noisy(2e-6 + s / 1e10, 0.3, seed=0)
    pw = fit_piecewise(s, t)
    assert pw.dof == 0 and math.isnan(pw.rel_residual)
    h = fit_hockney(s, t)
    assert h.dof == 4 and h.rel_residual > 0.05
    ranges = fit_loggp(s, t, np.full(6, 1e-6), np.full(6, 3e-7), pw.breaks)
    assert [r.dof for r in ranges] == [0, 0, 0]
    assert all(math.isnan(r.rel_residual) for r in ranges)
    flags = dof_flags(pw, ranges)
    assert len(flags) == 2 and all("0 degrees of freedom" in f for f in flags)
    assert "6 sizes for its 6 parameters" in flags[0]
    assert residual_text(pw.rel_residual, pw.dof).startswith("no rel. residual")
    big = np.array([0, 1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 1 << 22],
                   float)
    wide = fit_piecewise(big, noisy(2e-6 + big / 1e10, 0.05, seed=1))
    assert wide.dof == 7 and 0 < wide.rel_residual < 0.2
    assert dof_flags(wide, []) == []


def test_network_report_names_the_missing_degrees_of_freedom():
    """fit_pair on --quick's sizes: the report and the flags say 0 degrees of freedom for
    the piecewise fit instead of a residual."""
    pytest.importorskip("mpi4py")
    from bsim.calibration.network_bench import (
        QUICK_SIZES,
        NetworkCalibration,
        PairResult,
        fit_pair,
    )
    res = PairResult("intra", (0, 1), list(QUICK_SIZES))
    res.pingpong = [summarize([v] * 6) for v in noisy(2e-6 + np.array(QUICK_SIZES) / 1e10,
                                                      0.3, seed=0)]
    res.inner = [1] * 6
    fits = fit_pair(res)
    assert any("piecewise fit: 6 sizes" in f for f in fits.flags)
    report = NetworkCalibration({"intra": res}, {"intra": fits}, [2]).report()
    line = next(ln for ln in report.splitlines() if ln.startswith("piecewise:"))
    assert "no rel. residual (0 degrees of freedom" in line
    assert "hockney" in report and "(4 dof)" in report


def test_relative_residual_is_the_mean_the_docs_state():
    """|1.1 - 1|/1 = 0.1 and |2.6 - 2|/2 = 0.3: mean 0.2 (an RMS would give 0.224); the
    flags' docstring states that formula."""
    from bsim.calibration import quality
    from bsim.calibration.lsq import rel_residual
    assert rel_residual(np.array([1.1, 2.6]), np.array([1.0, 2.0])) == pytest.approx(0.2)
    assert "mean(|pred - t| / t)" in (quality.__doc__ or "")
    assert "sqrt(mean" not in (quality.__doc__ or "")


def test_unit_names_are_not_pluralised_twice(tmp_path):
    """A work column already plural ('cells', 'flops') is not made 'cellss'."""
    bad = tmp_path / "k.csv"
    bad.write_text("cells,seconds\n30,1\n20,2\n10,3\n")
    with pytest.raises(FitError, match="cells must be non-decreasing") as info:
        read_kernel_csv(bad)
    assert "cellss" not in str(info.value)
    with pytest.raises(FitError, match="too few distinct flops: need >= 4") as info:
        fit_kernel([1, 1, 2, 2], [1, 1, 2, 2], "piecewise", unit="flops")
    assert "flopss" not in str(info.value)
    with pytest.raises(FitError, match="sizes must be increasing"):
        fit_hockney([0, 8, 8], [1e-6, 2e-6, 3e-6])
