"""`bsim compare`: phase totals, the largest change, rank groups with the largest differences."""

from __future__ import annotations

import numpy as np

from bsim.outputs.compare import compare, group_differences, phase_table
from bsim.outputs.result import Result


def make(calc, wait, comm, **kw):
    calc, wait, comm = (np.array(x, float) for x in (calc, wait, comm))
    n = len(calc)
    return Result(ranks=n, finish=calc + wait + comm, calc=calc, wait=wait, comm=comm,
                  ops=np.ones(n, np.int64), messages=np.zeros(n, np.int64),
                  bytes=np.zeros(n, np.int64), program="p", network="hockney", **kw)


# A: 8 balanced ranks, 1 ms calc + 0.1 ms comm each.
# B: the same but ranks 6 and 7 compute 3 ms: the others wait 2 ms in the collective.
A = make([1e-3] * 8, [0.0] * 8, [1e-4] * 8)
B = make([1e-3] * 6 + [3e-3] * 2, [2e-3] * 6 + [0.0] * 2, [1e-4] * 8,
         params={"imbalance": 3})


def test_phase_table_totals():
    """Totals: calc 8 -> 12 ms, wait 0 -> 12 ms, comm unchanged; elapsed 1.1 -> 3.1 ms."""
    rows = {label: (a, b) for label, a, b in phase_table(A, B)}
    assert rows["elapsed"] == (1.1e-3, 3.1e-3)
    assert np.allclose(rows["calc total"], (8e-3, 12e-3))
    assert np.allclose(rows["wait total"], (0.0, 12e-3))
    assert np.allclose(rows["comm total"], (8e-4, 8e-4))


def test_groups_find_the_slow_ranks():
    """4 groups of 2 ranks: group 6-7 changes calc by +2 ms, the others wait by +2 ms."""
    rows = group_differences(A, B, groups=4)
    assert [r["ranks_a"] for r in rows] == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert rows[3]["largest"] == "calc" and np.isclose(rows[3]["calc"][2], 2e-3)
    assert rows[0]["largest"] == "wait" and np.isclose(rows[0]["wait"][2], 2e-3)
    assert np.isclose(rows[3]["finish"][2], 2e-3) and np.isclose(rows[3]["score"], 2e-3)


def test_report_text():
    """The report names both runs, the ratios, the dominant phase and the slow group."""
    text = compare(A, B, groups=4, top=2)
    assert "A: p on 8 ranks" in text and "B: p on 8 ranks" in text
    assert "params differ: imbalance: None -> 3" in text
    lines = {ln.split()[0] + " " + ln.split()[1]: ln for ln in text.splitlines()
             if ln.strip().startswith(("calc total", "wait total", "comm total"))}
    assert "1.500x" in lines["calc total"] and "new" in lines["wait total"]
    assert "1.000x" in lines["comm total"]
    assert "the largest change of total time is wait" in text
    assert "+181.8%" in text      # elapsed 1.1 -> 3.1 ms
    groups = text.split("rank groups")[1]
    assert "6-7" in groups and "0-1" in groups


def test_different_rank_counts_use_fractions():
    """4 vs 8 ranks: groups are the same fractions of each run."""
    small = make([1e-3] * 4, [0.0] * 4, [1e-4] * 4)
    rows = group_differences(small, B, groups=2)
    assert [(r["ranks_a"], r["ranks_b"]) for r in rows] == [((0, 1), (0, 3)), ((2, 3), (4, 7))]
    assert "by fraction of ranks" in compare(small, B, groups=2)


def test_compare_command(tmp_path, capsys):
    """`bsim compare A.json B.json` prints the report."""
    from bsim.cli.main import build_parser
    a, b = A.to_json(tmp_path / "a.json"), B.to_json(tmp_path / "b.json")
    p = build_parser()
    ns = p.parse_args(["compare", str(a), str(b), "--groups", "4"])
    assert ns.handler(ns) == 0
    out = capsys.readouterr().out
    assert "wait total" in out and str(a) in out and "6-7" in out


def test_noise_and_models_are_recorded_and_compared(tmp_path):
    """A what-if with noise: the JSON and summary record it, compare says what differs."""
    import bsim
    from bsim.engine.noise import PeriodicNoise
    from bsim.outputs.compare import compare

    def prog():
        bsim.add_time(1e-3)

    clean = bsim.simulate(prog, ranks=2, network="hockney")
    noisy = bsim.simulate(prog, ranks=2, network="hockney",
                          noise=PeriodicNoise(period=1e-3, duration=1e-4, phase=0.0))
    assert clean.noise == "" and "noise" not in clean.to_dict()
    assert noisy.noise.startswith("periodic:period=0.001,duration=0.0001")
    assert noisy.to_dict()["noise"] == noisy.noise and "noise     periodic" in noisy.summary()
    assert bsim.Result.from_dict(noisy.to_dict()).noise == noisy.noise
    assert f"noise differ: none -> {noisy.noise}" in compare(clean, noisy)


def test_compare_names_the_machines_and_kernel_models_that_differ(tmp_path):
    """The same sweep3d on es40 and on bgp: the report says machine and kernel model differ."""
    from bsim.cli.main import main
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    base = ["run", "sweep3d", "--param", "px=2", "--param", "py=2", "--param", "nx=8",
            "--param", "ny=8", "--param", "nz=10", "--param", "mk=5", "--quiet"]
    assert main(base + ["--machine", "es40", "--json", str(a)]) == 0
    assert main(base + ["--machine", "bgp", "--json", str(b)]) == 0
    text = compare(str(a), str(b))
    assert "machine differ: es40 -> bgp" in text
    assert "kernel model differ: t_cell = 1.2e-07 s per cell-angle update: es40" in text
