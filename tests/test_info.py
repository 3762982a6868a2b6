"""MPI.Info objects: the same program under real mpiexec and under bsim gives the same values.

Info hints change no simulated time; what is compared is what a program sees: items in
the order they were set, handle equality after Dup/Free/copy, pickling, the mapping
methods, the errors MPI raises, and the environment keys INFO_ENV reserves.
"""

from __future__ import annotations

import json

import pytest
from conftest import needs_mpiexec, real_mpi_returns

import bsim
from bsim import MPI as BMPI

PROGRAM = '''
import pickle
from mpi4py import MPI


def main():
    out = {}
    info = MPI.Info.Create({"b": "2", "a": "1"})
    info["c"] = "3"
    info.update([("a", "10")], d="4")
    out["items"] = info.items()
    out["nth"] = [info.Get_nthkey(i) for i in range(info.Get_nkeys())]
    out["get"] = [info.Get("a"), info.Get("zz"), info.get("zz", "dflt")]
    out["pop"] = [info.pop("b"), info.popitem(), len(info)]
    dup = info.Dup()
    out["dup"] = [dup == info, dup.items() == info.items(), MPI.Info(info) == info]
    copy = pickle.loads(pickle.dumps(info))
    out["pickle"] = [copy == info, copy.items() == info.items(),
                     pickle.loads(pickle.dumps(MPI.INFO_NULL)) is MPI.INFO_NULL,
                     pickle.loads(pickle.dumps(MPI.INFO_ENV)) is MPI.INFO_ENV]
    try:
        info.Delete("nope")
        out["delete_missing"] = "no error"
    except MPI.Exception:
        out["delete_missing"] = "MPI.Exception"
    for x in (dup, copy, info):
        x.Free()
    out["freed"] = [info == MPI.INFO_NULL, bool(info), bool(MPI.INFO_ENV)]
    null = MPI.INFO_NULL
    out["null"] = [len(null), "k" in null, null.keys(), null.get("k", "d")]
    for name, fn in (("setitem", lambda: null.__setitem__("k", "v")),
                     ("update", lambda: null.update([]))):
        try:
            fn()
            out[name] = "no error"
        except KeyError:
            out[name] = "KeyError"
    env = MPI.INFO_ENV
    out["env_keys"] = sorted(k for k in ("command", "argv", "maxprocs", "soft", "host", "arch",
                                         "wdir", "file", "thread_level") if env.Get(k) is not None)
    comm = MPI.COMM_WORLD.Dup_with_info(MPI.INFO_NULL)
    hints = comm.Get_info()
    out["comm_info"] = type(hints).__name__
    hints.Free()
    comm.Free()
    return out
'''


def _simulate(ranks: int) -> bsim.Result:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], ranks)


def test_info_by_hand():
    out = _simulate(2).returns[0]
    assert out["items"] == [("b", "2"), ("a", "10"), ("c", "3"), ("d", "4")]
    assert out["nth"] == ["b", "a", "c", "d"]
    assert out["get"] == ["10", None, "dflt"]
    assert out["pop"] == ["2", ("d", "4"), 2]
    assert out["dup"] == [False, True, True]
    assert out["pickle"] == [False, True, True, True]
    assert out["delete_missing"] == "MPI.Exception"
    assert out["freed"] == [True, False, True]
    assert out["null"] == [0, False, [], "d"]
    assert out["setitem"] == out["update"] == "KeyError"


@needs_mpiexec
def test_info_equals_real_mpi():
    real = real_mpi_returns(2, PROGRAM)
    # JSON turns tuples into lists: compare through the same round trip
    sim = json.loads(json.dumps(_simulate(2).returns))
    # which environment keys an MPI library fills is its own choice (MPI 4.1 Sec. 11.8.3):
    # bsim fills every one; the keys real MPICH fills must be among them
    for r, s in zip(real, sim, strict=True):
        assert set(r.pop("env_keys")) <= set(s.pop("env_keys"))
    assert real == sim


def test_bad_info_arguments_are_errors():
    with pytest.raises(TypeError):
        BMPI.Info.Create(items=123)
    with pytest.raises(bsim.MPIUsageError, match="key of 300 characters"):
        BMPI.Info.Create({"k" * 300: "v"})

    def main():
        BMPI.COMM_WORLD.Set_info({"a": "b"})
    with pytest.raises(bsim.RankError):
        bsim.simulate(main, 1)
