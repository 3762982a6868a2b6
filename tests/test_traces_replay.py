"""Replay of traces: hand-built ones against hand-derived times, the compute rule, the
time-independent reader, and SimGrid's own replay of SMPI-produced traces."""

from __future__ import annotations

import pytest

from bsim.traces import Trace, load_trace, replay
from bsim.traces.replay import compute_rule
from bsim.traces.ti import read_ti

HOCKNEY = "hockney:latency=1e-06,bandwidth=1000000000.0"


def test_send_after_compute_lands_at_compute_plus_hockney_cost():
    """Rank 0 computes 1 ms then sends 1000 B; rank 1 receives: 1e-3 + 1e-6 + 1e-6 s."""
    trace = Trace([[("compute", 1e-3), ("send", 0, 1, 7, 1000)],
                   [("recv", 0, 0, 7, 1000)]])
    r = replay(trace, network=HOCKNEY, protocol="bsim")
    assert r.finish[1] == pytest.approx(1e-3 + 1e-6 + 1000 / 1e9, rel=1e-12)
    assert r.wait[1] == pytest.approx(1e-3, rel=1e-12)    # blocked until the send left
    assert r.calc[0] == pytest.approx(1e-3, rel=1e-12)


def test_nonblocking_pair_waits_at_the_wait():
    """Irecv posted at 0, waited after 2 ms of compute: the message (sent at 0) costs
    latency + 4096/1e9 and is paid at the wait under bsim's rule (receive = wait time)."""
    trace = Trace([[("isend", 0, 1, 0, 4096, 0), ("wait", (0,))],
                   [("irecv", 0, 0, 0, 4096, 0), ("compute", 2e-3), ("wait", (0,))]])
    r = replay(trace, network=HOCKNEY, protocol="bsim")
    assert r.finish[1] == pytest.approx(2e-3 + 1e-6 + 4096 / 1e9, rel=1e-12)


def test_collectives_on_a_split_communicator_replay():
    """Four ranks split in halves, allreduce on each half and on the world: every rank
    makes the same calls and the world allreduce ends them at one time."""
    ranks = [[("split", 0, 2, r % 2, r // 2), ("compute", 1e-4 * (r + 1)),
              ("allreduce", 2, 8), ("allreduce", 0, 8)] for r in range(4)]
    r = replay(Trace(ranks), network=HOCKNEY, protocol="bsim")
    assert len(set(r.ops)) == 1                            # the same calls on every rank
    assert max(r.finish) == pytest.approx(min(r.finish))   # the world allreduce syncs all


def test_compute_rule_scales_by_peak_ratio():
    """host peak / target peak per core; no host peak: kept; a given scale wins."""
    scale, rule = compute_rule("bgp", 6.8e9, None)
    assert scale == pytest.approx(6.8e9 / 3.4e9)         # bgp.toml: 3.4e9 per core
    assert "host peak" in rule
    assert compute_rule("bgp", None, None)[0] == 1.0
    assert compute_rule("bgp", 6.8e9, 0.5)[0] == 0.5
    with pytest.raises(ValueError, match="compute_scale"):
        compute_rule(None, None, 0.0)


def test_replay_records_the_rule_and_scales_calc():
    """Recorded on a 6.8 Gflop/s core, replayed on BG/P's 3.4 Gflop/s: 1 ms becomes 2 ms,
    and the result says why."""
    trace = Trace([[("compute", 1e-3)]])
    r = replay(trace, machine="bgp", host_peak=6.8e9)
    assert r.calc[0] == pytest.approx(2e-3, rel=1e-12)
    assert "host peak" in r.kernel_model and r.params["compute_scale"] == 2.0


def test_time_independent_trace_is_read(tmp_path):
    """SimGrid's line format: counts times datatype sizes, flops at the host speed."""
    (tmp_path / "r0.txt").write_text("0 init\n0 compute 2000000\n0 isend 1 5 10 0\n"
                                     "0 waitall 1\n0 bcast 16 0 1\n0 allreduce 4 1000 0\n"
                                     "0 finalize\n")
    (tmp_path / "r1.txt").write_text("1 init\n1 irecv 0 5 10 0\n1 wait 0 1 5\n"
                                     "1 bcast 16 0 1\n1 allreduce 4 1000 0\n1 finalize\n")
    (tmp_path / "index").write_text("r0.txt\nr1.txt\n")
    t = read_ti(tmp_path / "index", flops_per_second=1e9)
    assert t.ranks[0] == [("compute", 2e-3), ("isend", 0, 1, 5, 80, 0), ("wait", (0,)),
                          ("bcast", 0, 64, 0), ("allreduce", 0, 32), ("compute", 1e-6)]
    assert t.ranks[1][:2] == [("irecv", 0, 0, 5, 80, 0), ("wait", (0,))]
    assert load_trace(tmp_path / "index").ranks == t.ranks


def test_bad_time_independent_line_names_file_and_line(tmp_path):
    """One clear line: the file, its line number, what was wrong."""
    (tmp_path / "r0.txt").write_text("0 init\n0 send 1\n")
    with pytest.raises(ValueError, match=r"r0.txt:2: .*send 1"):
        read_ti(tmp_path / "r0.txt")
    with pytest.raises(FileNotFoundError, match="no such trace"):
        load_trace(tmp_path / "absent.otf2")
