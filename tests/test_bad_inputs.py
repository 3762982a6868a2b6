"""A battery of bad programs and configurations: each ends fast with one clear, named error.

Every case runs ``bsim run`` in-process and must exit with status 2 and print one
``bsim: error:`` line containing the expected words (the error classes are listed in
``docs/errors.md``).
"""

from __future__ import annotations

import time

import pytest

from bsim.cli.main import main

NET = ["--network", "hockney:latency=1e-6,bandwidth=1e9"]
PROGRAMS = {
    "bad_dest": "comm.Send(bsim.Buffer(4), dest=comm.size)",
    "bad_source": "comm.Recv(bsim.Buffer(4), source=-7)",
    "bad_tag": "comm.Send(bsim.Buffer(4), dest=0, tag=-5)",
    "float_tag": "comm.Send(bsim.Buffer(4), dest=0, tag=1.5)",
    "bad_root": "comm.Bcast(bsim.Buffer(4), root=comm.size)",
    "truncation": "comm.Sendrecv(bsim.Buffer(64), dest=(comm.rank + 1) % comm.size, "
                  "recvbuf=bsim.Buffer(8))",
    "mismatch": "comm.Barrier() if comm.rank else comm.Bcast(bsim.Buffer(4), root=0)",
    "root_mismatch": "comm.Bcast(bsim.Buffer(4), root=comm.rank)",
    "deadlock": "comm.Recv(bsim.Buffer(4), source=(comm.rank + 1) % comm.size)",
    "livelock": "[None for _ in iter(lambda: comm.Iprobe(source=0, tag=9), True)]",
    "exception": "x = {}['missing']",
    "zero_division": "1 / 0",
    "add_time_negative": "bsim.add_time(-1.0)",
    "add_time_bool": "bsim.add_time(True)",
    "add_time_str": "bsim.add_time('1')",
    "add_time_nan": "bsim.add_time(float('nan'))",
    "finalize_twice": "MPI.Finalize(); MPI.Finalize()",
    "after_finalize": "MPI.Finalize(); comm.Barrier()",
    "init_again": "MPI.Init()",
    "sys_exit": "import sys; sys.exit(4)",
    "abort": "comm.Abort(3)",
    "bad_buffer": "comm.Send(object(), dest=0)",
    "bad_split_color": "comm.Split(color='red')",
    "bad_cart": "comm.Create_cart([comm.size + 1])",
    "cart_periods": "comm.Create_cart([comm.size], periods=[True, False])",
    "negative_count": "comm.Send([None, -1, MPI.DOUBLE], dest=0)",
    "wildcard_send": "comm.Send(bsim.Buffer(4), dest=MPI.ANY_SOURCE)",
    "alltoallv_counts": "comm.Alltoallv([bsim.Buffer(8 * comm.size), [8] * comm.size], "
                        "[bsim.Buffer(16 * comm.size), [16] * comm.size])",
    "free_world": "comm.Free()",
    "use_after_free": "d = comm.Dup(); d.Free(); d.Barrier()",
    "free_twice": "d = comm.Dup(); d.Free(); d.Free()",
    "split_key_float": "comm.Split(0, key=1.5)",
    "bad_op": "comm.allreduce(1, op='sum')",
    "none_in_waitall": "MPI.Request.Waitall([comm.Irecv(bsim.Buffer(4), source=MPI.PROC_NULL), "
                       "None])",
    "none_in_waitany": "MPI.Request.Waitany([None])",
    "none_in_testall": "MPI.Request.testall([None])",
    "none_in_testany": "MPI.Request.testany([None])",
    "none_in_Testsome": "MPI.Request.Testsome([None])",
    "none_in_testsome": "MPI.Request.testsome([None])",
    "readonly_recv": "comm.Sendrecv(bsim.Buffer(8), dest=(comm.rank + 1) % comm.size, "
                     "recvbuf=bytes(8))",
    "null_comm": "comm.Split(MPI.UNDEFINED, 0).Barrier()",
}
EXPECT = {
    "bad_dest": "invalid dest", "bad_source": "invalid source", "bad_tag": "invalid tag",
    "float_tag": "invalid tag", "bad_root": "invalid root", "truncation": "truncat",
    "mismatch": "collective mismatch", "root_mismatch": "collective mismatch",
    "deadlock": "deadlock", "livelock": "livelock", "exception": "KeyError",
    "zero_division": "ZeroDivisionError", "add_time_negative": "add_time",
    "add_time_bool": "add_time", "add_time_str": "add_time", "add_time_nan": "add_time",
    "finalize_twice": "after MPI.Finalize", "after_finalize": "after MPI.Finalize",
    "init_again": "already initialized", "sys_exit": "sys.exit(4)",
    "abort": "Abort(3) at ",   # and the user's file:line (it had none)
    "bad_buffer": "bad buffer", "bad_split_color": "must be integers",
    "bad_cart": "needs", "cart_periods": "periods", "negative_count": "bad buffer",
    "alltoallv_counts": "counts must match", "free_world": "cannot be freed",
    "use_after_free": "after its Free()", "free_twice": "after its Free()",
    "split_key_float": "must be integers", "bad_op": "MPI.Op",
    "none_in_waitall": "Waitall: requests[1] is None, not a Request",
    "none_in_waitany": "Waitany: requests[0] is None",
    "none_in_testall": "testall: requests[0] is None",
    "none_in_testany": "testany: requests[0] is None",
    "none_in_Testsome": "Testsome: requests[0] is None",
    "none_in_testsome": "testsome: requests[0] is None",
    "readonly_recv": "the receive buffer is read-only",
    "wildcard_send": "invalid dest",
    "null_comm": "Barrier on COMM_NULL",   # it said "operation on COMM_NULL"
}


def _run(argv: list[str], capsys) -> str:
    t0 = time.perf_counter()
    status = main(argv)
    elapsed = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert status == 2, err
    assert elapsed < 10, f"took {elapsed:.1f} s"
    lines = [ln for ln in err.splitlines() if ln.startswith("bsim: error:")]
    assert len(lines) == 1, err
    return err


@pytest.mark.parametrize("case", sorted(PROGRAMS))
def test_bad_program(case, tmp_path, capsys):
    """A bad MPI program: status 2, one error line naming what was wrong."""
    prog = tmp_path / f"{case}.py"
    prog.write_text("import bsim\nfrom mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"
                    f"{PROGRAMS[case]}\n")
    err = _run(["run", str(prog), "-n", "2", *NET], capsys)
    assert EXPECT[case] in err


@pytest.mark.parametrize("argv,expected", [
    (["run", "halo2d", "--network", "nosuch"], "unknown network model 'nosuch'"),
    (["run", "halo2d", "--network", "hockney:lat=1"], "unknown parameter(s) lat"),
    (["run", "halo2d", "--network", "hockney:latency"], "expected KEY=VALUE"),
    (["run", "halo2d", "--network", "hockney:bandwidth=true"], "bandwidth must be a finite"),
    (["run", "halo2d", "--network", "torus:dims=4x4,link_bandwidth=false"], "link_bandwidth"),
    (["run", "halo2d", "--network", "torus:dims=100000x100000x1000"], "bsim tabulates"),
    (["run", "halo2d", "--protocol", "nosuch"], "unknown protocol 'nosuch'"),
    (["run", "halo2d", "--protocol", "loggp:eager=1"], "unknown parameter(s) eager"),
    (["run", "halo2d", "--collectives", "nosuch"], "unknown collective model 'nosuch'"),
    (["run", "halo2d", "--collectives", "clog:c=x"], "clog"),
    (["run", "halo2d", "--noise", "jitter:x=1"], "unknown noise model 'jitter'"),
    (["run", "halo2d", "--noise", "periodic:period=1e-3"], "noise"),
    (["run", "halo2d", "--param", "px=0"], "px=0 must be >= 1"),
    (["run", "halo2d", "--param", "iterations=-1"], "iterations=-1 must be >= 0"),
    (["run", "halo2d", "--param", "px=two"], "px='two' is not a int"),
    (["run", "halo2d", "--param", "bogus=1"], "unknown parameter(s) bogus"),
    (["run", "sweep3d", "--param", "mk=0"], "mk=0 must be >= 1"),
    (["run", "hpl", "--param", "nb=0"], "nb=0 must be >= 1"),
    (["run", "milc_cg", "--param", "niters=-3"], "niters=-3 must be >= 0"),
    (["run", "phase", "--param", "pb=0"], "pb=0 must be >= 1"),
    (["run", "nosuch"], "unknown skeleton 'nosuch'"),
    (["run", "/no/such/file.py", "-n", "2"], "no such program file"),
    (["run", "milc_cg", "-n", "64", "--param", "nprocs=16"],
     "runs on 16 ranks, not -n 64: set the parameters"),
    (["run", "halo2d", "--machine", "nosuch"], "nosuch"),
    (["run", "halo2d", "--max-sim-time", "1e-9"], "max_sim_time"),
    (["run", "halo2d", "--max-events", "0"], "max_events must be an int >= 1"),
    (["run", "halo2d", "--json", "/proc/x.json"], "--json /proc/x.json"),
    (["run", "halo2d", "--trace-ranks", "0-3"], "need --trace FILE"),
    (["run", "halo2d", "--trace-max-events", "5"], "need --trace FILE"),
    (["run", "tests/programs/ring.py", "-n", "1000000000"], "virtual ranks need about"),
    (["run", "tests/programs/ring.py", "-n", "0"], "ranks must be an int >= 1"),
    (["run", "halo2d", "--network", "hockney:latency=1e-6,latency=2e-6"],
     "latency given twice"),
    (["run", "halo2d", "--noise", "periodic:period=1e-3,period=2e-3,duration=1e-5"],
     "period given twice"),
    (["run", "tests/programs", "-n", "2"], "tests/programs is a directory"),
    (["run", "halo2d", "--", "--foo"], "takes --param K=V, not program arguments (--foo)"),
])
def test_bad_configuration(argv, expected, capsys):
    """A bad option, spec, parameter or resource request: status 2 and one named error."""
    assert expected in _run(argv, capsys)


def test_halo2d_splits_an_uneven_grid_and_refuses_an_empty_block():
    """10 x 4 points on 3 x 2 ranks: columns of ranks hold 4, 3, 3 points in x and 2 in y
    (block distribution), so the calc of 1 ns a point is 8, 6, 6 ns (the 40 points are all
    updated: with nx // px the 10th column was dropped); a 2 x 2 grid on 4 x 4 ranks leaves
    ranks without points and is refused (it ran with nothing to compute)."""
    import bsim
    from skeletons.halo2d import main as halo2d
    res = bsim.simulate(halo2d, 6, network="hockney:latency=1e-6,bandwidth=1e9",
                        kwargs=dict(px=3, py=2, nx=10, ny=4, iterations=1, t_point=1e-9))
    assert [round(c * 1e9, 9) for c in res.calc] == [8.0, 6.0, 6.0, 8.0, 6.0, 6.0]
    with pytest.raises(bsim.RankError, match="gives some of the 4x4 ranks no points"):
        bsim.simulate(halo2d, 16, kwargs=dict(px=4, py=4, nx=2, ny=2))


@pytest.mark.parametrize("table,old,new,expected", [
    ("network", "latency = 9.8e-6", "latency = -9.8e-6", "latency must be a finite number"),
    ("collectives", "allreduce = { c = 238e-6", "allreduce = { c = -238e-6",
     "allreduce.c must be a finite number"),
])
def test_a_bad_value_in_a_machine_file_names_the_file(table, old, new, expected, tmp_path,
                                                      capsys):
    """A copy of a preset with one bad value: the one line names the file and its table
    (it named only the model), from the command line and from ``simulate(machine=...)``."""
    from pathlib import Path

    import bsim
    preset = "bgp" if table == "network" else "xt5"
    text = (Path(bsim.__file__).parent / "machines" / f"{preset}.toml").read_text()
    assert old in text
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    err = _run(["run", "sweep3d", "--machine", str(path)], capsys)
    assert f"machine file '{path}' [{table}]: " in err and expected in err
    with pytest.raises(ValueError, match=rf"machine file '{path}' \[{table}\]: "):
        bsim.simulate(lambda: None, 2, machine=str(path))


def test_an_error_raised_in_the_network_models_names_the_user_s_line():
    """A collective cost spec without the op a program calls fails at that call; the line
    names the user's file:line, not netmodels' (netmodels is bsim's own code)."""
    import bsim
    from bsim import MPI

    def main():
        MPI.COMM_WORLD.Barrier()
        MPI.COMM_WORLD.bcast(1, root=0)

    with pytest.raises(bsim.RankError) as info:
        bsim.simulate(main, 2, collectives="clog:barrier.c=1e-6,barrier.d=0")
    text = str(info.value)
    assert "no c and d for op 'bcast'" in text and "netmodels" not in text
    assert "test_bad_inputs.py" in text
