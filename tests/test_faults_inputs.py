"""Inputs that were silently accepted, wrong, or refused in vague words: each now ends
with one line naming what was wrong and where (the option and key, the rank, the call,
the user's file:line), or a warning that ``--quiet`` does not hide."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bsim
from bsim import MPI
from bsim.errors import DeadlockError, RankError
from bsim.machines import MachineError, load_machine

ROOT = Path(__file__).resolve().parents[1]
PRESET = ROOT / "bsim" / "machines" / "xt5.toml"


def _bsim(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bsim", *args], capture_output=True,
                          text=True, timeout=240, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _program(tmp_path: Path, text: str) -> str:
    path = tmp_path / "prog.py"
    path.write_text(text)
    return str(path)


def _line(path: str, marker: str) -> int:
    return next(i for i, line in enumerate(Path(path).read_text().splitlines(), 1)
                if marker in line)


# -- the command line ----------------------------------------------------------------------
def test_a_parameter_given_twice_is_refused(tmp_path):
    """--param px=2 --param px=4 named, not the last kept silently (before: status 0,
    the program got --px=4)."""
    prog = _program(tmp_path, "print('ran')\n")
    res = _bsim(["run", prog, "-n", "1", "--protocol", "bsim", "--param", "px=2",
                 "--param", "px=4"], tmp_path)
    assert res.returncode == 2
    assert res.stderr == ("bsim: error: --param px=2 and --param px=4: px is given twice; "
                          "give it once\n")
    assert "ran" not in res.stdout


@pytest.mark.parametrize("spec", ["", " ", ";"])
def test_an_empty_noise_spec_is_refused(tmp_path, spec):
    """--noise '' (a variable left empty in a batch script) is refused (before: the run
    went on without noise)."""
    prog = _program(tmp_path, "print('ran')\n")
    res = _bsim(["run", prog, "-n", "1", "--protocol", "bsim", "--noise", spec], tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith(f"bsim: error: --noise {spec!r}: an empty noise spec")


@pytest.mark.parametrize("spec, key, kind", [
    ("periodic:period=1e-3,duration=1e-5,seed=abc", "seed", "an integer"),
    ("detour:rate=10,mean=x", "mean", "a number"),
    ("net:mean=1e-6,seed=1.5", "seed", "an integer"),
])
def test_a_word_where_a_noise_number_belongs_names_the_key(spec, key, kind):
    """seed=abc names --noise and seed (before: "invalid literal for int() with base 10:
    'abc'", naming neither)."""
    from bsim.engine.noise import build_noise
    with pytest.raises(ValueError) as err:
        build_noise(spec)
    assert str(err.value).startswith(f"noise spec {spec!r} (--noise): {key} must be {kind}")


# -- machine files --------------------------------------------------------------------------
def _machine(tmp_path: Path, old: str, new: str) -> Path:
    text = PRESET.read_text()
    assert old in text
    path = tmp_path / "m.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_an_absurd_cores_per_node_is_refused_at_load(tmp_path):
    """cores_per_node = 2**62 is refused when the file loads, naming the key and the file
    (before: it loaded)."""
    line = next(ln for ln in PRESET.read_text().splitlines()
                if ln.startswith("cores_per_node"))
    path = _machine(tmp_path, line, f"cores_per_node = {2**62}")
    with pytest.raises(MachineError) as err:
        load_machine(path)
    assert str(err.value) == (f"machine file {str(path)!r}: cores_per_node must be an "
                              f"integer from 1 to 1,048,576 (cores of one node), found "
                              f"{2**62}")


def test_a_misspelt_collectives_model_key_is_named(tmp_path):
    """[collectives] modl = "clog": the unknown key, its likely meaning and the known
    keys (before: "[collectives] needs a string 'model'")."""
    from bsim.machines import collective_spec
    path = _machine(tmp_path, 'model = "clog"', 'modl = "clog"')
    with pytest.raises(MachineError) as err:
        collective_spec(path)
    text = str(err.value)
    assert "[collectives] has no 'model' key; unknown key 'modl' (did you mean 'model'?)" \
        in text
    assert "known keys: model, " in text and "'analytic', 'clog', 'table'" in text


# -- programs ------------------------------------------------------------------------------
UNDONE = """\
from mpi4py import MPI
import bsim
comm = MPI.COMM_WORLD
if comm.Get_rank() == 0:
    comm.Send(bsim.Buffer(8), dest=1, tag=7)
    request = comm.Irecv(bsim.Buffer(8), source=1, tag=3)
"""


def test_what_a_program_left_undone_is_warned_of_under_quiet(tmp_path):
    """A message never received and a request never completed: a warning on stderr even
    with --quiet, naming the request's rank, call, source and tag, and the message's
    receiver, sender, tag and size (before: only counts, in the summary, which --quiet
    hides)."""
    prog = _program(tmp_path, UNDONE)
    res = _bsim(["run", prog, "-n", "2", "--protocol", "bsim", "--quiet"], tmp_path)
    assert res.returncode == 0
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert lines[0] == ("bsim: warning: 1 nonblocking requests never completed (Wait/Test) "
                        "nor freed, on rank(s) 0 (1) (e.g. rank 0's Irecv(source=world 1, "
                        "tag=3))")
    assert lines[1].startswith("bsim: warning: 1 messages sent were never received, by "
                               "rank(s) 1 (1)")
    assert lines[1].endswith("(the first: rank 1 never received a send from world rank 0, "
                             "tag 7, 8 bytes, sent at t=0.0 s)")


def test_a_rank_that_left_with_sys_exit_is_named_in_the_deadlock():
    """sys.exit(0) in rank 1 while ranks 0 and 2 wait in a Barrier: the report says rank 1
    ended early, and where (before: only the two blocked ranks)."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.Get_rank() == 1:
            sys.exit(0)   # the leaving line
        comm.Barrier()
    with pytest.raises(DeadlockError) as err:
        bsim.simulate(main, 3, protocol="bsim")
    here = __file__
    assert (f"  rank 1 had ended early with sys.exit(0) (at {here}:"
            f"{_line(__file__, 'the leaving' + ' line')}) (t=0.0): the others may wait for "
            f"it") in str(err.value)


def test_os_fork_in_a_rank_is_refused():
    """os.fork() in a rank: a RankError naming the rank and the line (before: the child
    was a copy of the whole simulation and ran the rest of the run again)."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.Get_rank() == 1:
            pid = os.fork()   # the forking line
            if pid == 0:
                os._exit(0)
        comm.Barrier()
    with pytest.raises(RankError) as err:
        bsim.simulate(main, 2, protocol="bsim")
    here = __file__
    assert str(err.value).startswith(
        f"rank 1 called os.fork() (at {here}:{_line(__file__, 'the forking' + ' line')}): "
        f"under bsim every rank shares one host process")
    assert os.fork.__name__ == "fork"   # put back after the run


@pytest.mark.parametrize("typed", [True, False])
def test_an_array_of_objects_is_not_a_buffer(typed):
    """A numpy array of dtype object sent as a buffer: refused as mpi4py refuses it
    (KeyError "cannot map 'O' to MPI datatype"), with or without a datatype (before:
    its pointers were delivered as data)."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.Get_rank() == 0:
            data = np.array([1, "a", None], dtype=object)
            comm.Send(data if typed else [data, MPI.BYTE], dest=1)
        else:
            comm.Recv(bytearray(64), source=0)
    with pytest.raises(KeyError) as err:
        bsim.simulate(main, 2, protocol="bsim")
    assert "rank 0: Send: bad buffer: cannot map 'O' to MPI datatype (use comm.send for " \
        "objects)" in str(err.value)


THREAD = """\
import threading
from mpi4py import MPI

def work():
    raise ValueError("boom in a thread")   # the thread's line

thread = threading.Thread(target=work, name="worker")
thread.start()
thread.join()
MPI.COMM_WORLD.Barrier()
"""


def test_an_exception_in_a_rank_s_thread_fails_the_run(tmp_path):
    """A rank's thread dies of an exception: status 2, one line naming the rank, the
    thread and the line (before: Python's traceback per rank, then status 0 and a
    result)."""
    prog = _program(tmp_path, THREAD)
    res = _bsim(["run", prog, "-n", "2", "--protocol", "bsim", "--quiet"], tmp_path)
    assert res.returncode == 2
    assert res.stderr == (f"bsim: error: rank 0: thread 'worker' raised ValueError: boom in "
                          f"a thread (at {prog}:{_line(prog, 'the thread' + chr(39) + 's line')})"
                          f"\n")


@pytest.mark.parametrize("size", [2, 3])
def test_an_allreduce_of_different_types_is_a_collective_mismatch(size):
    """Allreduce of 8 int32 on rank 0 and 4 float64 on the others (the same 32 bytes):
    a CollectiveMismatchError naming both and the line (before: numpy's 'operands could
    not be broadcast together')."""
    from bsim.errors import CollectiveMismatchError

    def main():
        comm = MPI.COMM_WORLD
        a = np.ones(8, np.int32) if comm.Get_rank() == 0 else np.ones(4, np.float64)
        comm.Allreduce(a, np.empty_like(a))   # the reducing line
    with pytest.raises(CollectiveMismatchError) as err:
        bsim.simulate(main, size, protocol="bsim")
    assert str(err.value).endswith(
        "Allreduce: collective mismatch: member 0 passed 8 x int32, member 1 passed 4 x "
        "float64 (every member must pass the same count of the same datatype) (at "
        f"{__file__}:{_line(__file__, 'the reducing' + ' line')})")


SELF_SEND = """\
import sys
import numpy as np
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank = comm.Get_rank()
data = np.zeros(int(sys.argv[1]) // 8)
comm.Send(data, dest=rank)   # the self send
comm.Recv(data, source=rank)
print("done", rank)
"""


@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
@pytest.mark.parametrize("nbytes, deadlock", [(8000, False), (8008, True), (8 << 20, True)])
def test_a_large_blocking_send_to_itself_deadlocks(tmp_path, protocol, nbytes, deadlock):
    """A blocking Send to itself before its Recv: above 8,000 bytes a deadlock naming the
    Send and its line, as MPICH hangs (the rule is measured: SELF_EAGER_LIMIT); 8,000
    bytes complete (before: 8 MiB completed under the bsim protocol)."""
    prog = _program(tmp_path, SELF_SEND)
    res = _bsim(["run", prog, "-n", "2", "--protocol", protocol, "--quiet", "--",
                 str(nbytes)], tmp_path)
    if not deadlock:
        assert res.returncode == 0 and res.stdout == "done 0\ndone 1\n", res.stderr
        return
    assert res.returncode == 2
    assert res.stderr.startswith("bsim: error: deadlock at t=")
    assert (f"rank 0: Send(dest=world 0, tag=0, {nbytes} bytes) at {prog}:"
            f"{_line(prog, 'the self send')}") in res.stderr


def test_mpich_hangs_on_a_large_send_to_itself(tmp_path):
    """The rule's source: real mpiexec -n 2 (the mpich wheel) finishes 8,000 bytes and
    hangs on 65,536 (ended by timeout)."""
    mpiexec = Path(sys.executable).parent / "mpiexec"
    pytest.importorskip("mpi4py")
    if not mpiexec.exists():
        pytest.skip("no mpiexec beside the interpreter (the mpich wheel)")
    prog = _program(tmp_path, SELF_SEND)

    def run(nbytes: int) -> bool:
        proc = subprocess.Popen([str(mpiexec), "-n", "2", sys.executable, prog, str(nbytes)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)   # mpiexec and the ranks it started
            proc.communicate()
            return False
        return out.count("done") == 2
    assert run(8000)
    assert not run(65536)
