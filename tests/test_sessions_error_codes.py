"""MPI sessions (``bsim/mpi/dynamic/sessions.py``) and error classes, codes and strings
(``bsim/mpi/common/error_codes.py``): the same program under real ``mpiexec`` and under bsim
must return the same values; the closed-form checks say what MPI 4.1 requires."""

from __future__ import annotations

from typing import Any

from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

import bsim
from bsim import MPI

PROGRAM = '''
from mpi4py import MPI


def main():
    out = {}
    session = MPI.Session.Init()
    psets = [session.Get_nth_pset(i) for i in range(session.Get_num_psets())]
    out["psets"] = sorted(p for p in psets if p in ("mpi://WORLD", "mpi://SELF"))
    sizes = {}
    for name in ("mpi://WORLD", "mpi://SELF"):
        info = session.Get_pset_info(name)
        sizes[name] = info.Get("mpi_size")
        info.Free()
    out["sizes"] = sizes
    group = session.Create_group("mpi://WORLD")
    comm = MPI.Intracomm.Create_from_group(group, "org.bsim.test")
    out["allreduce"] = comm.allreduce(comm.rank + 1)
    out["group"] = (group.Get_size(), group.Get_rank())
    comm.Free()
    group.Free()
    codes = []
    for bad in (lambda: session.Get_nth_pset(-1), lambda: session.Get_pset_info("no-such"),
                lambda: MPI.SESSION_NULL.Get_num_psets()):
        try:
            bad()
        except MPI.Exception as exc:
            codes.append(exc.Get_error_class())
    out["codes"] = codes
    session.Finalize()
    out["finalized_is_null"] = session == MPI.SESSION_NULL
    cls = MPI.Add_error_class()
    out["lastused"] = cls == MPI.COMM_WORLD.Get_attr(MPI.LASTUSEDCODE)
    code = MPI.Add_error_code(cls)
    MPI.Add_error_string(code, "mine")
    out["user"] = (MPI.Get_error_class(code) == cls, MPI.Get_error_string(code),
                   MPI.Get_error_string(cls))
    try:
        MPI.Remove_error_code(code)   # its string is still there
        out["remove_with_string"] = "removed"
    except MPI.Exception:
        out["remove_with_string"] = "refused"
    MPI.Remove_error_string(code)
    MPI.Remove_error_code(code)
    MPI.Remove_error_class(cls)
    exc = MPI.Exception(MPI.ERR_RANK)
    out["exception"] = (int(exc), exc.Get_error_class(), repr(exc), exc == MPI.ERR_RANK,
                        str(exc) == MPI.Get_error_string(MPI.ERR_RANK),
                        bool(MPI.Exception(MPI.SUCCESS)), int(MPI.Exception(-1)))
    return out
'''


def _bsim(nprocs: int) -> list[Any]:
    return simulated_returns(nprocs, PROGRAM)


@needs_mpiexec
def test_sessions_and_error_codes_as_real_mpi() -> None:
    # JSON turns tuples into lists: compare through it
    import json
    assert json.loads(json.dumps(_bsim(2))) == real_mpi_returns(2, PROGRAM)


def test_sessions_values() -> None:
    for rank, out in enumerate(_bsim(3)):
        assert out["psets"] == ["mpi://SELF", "mpi://WORLD"]
        assert out["sizes"] == {"mpi://WORLD": "3", "mpi://SELF": "1"}
        assert out["allreduce"] == 1 + 2 + 3
        assert out["group"] == (3, rank)
        assert out["codes"] == [MPI.ERR_ARG, MPI.ERR_ARG, MPI.ERR_SESSION]
        assert out["finalized_is_null"]


def test_error_code_values() -> None:
    out = _bsim(1)[0]
    assert out["lastused"]
    assert out["user"] == (True, "mine", "")
    assert out["remove_with_string"] == "refused"   # MPI 4.1, section 9.5
    assert out["exception"] == (MPI.ERR_RANK, MPI.ERR_RANK, f"MPI.Exception({MPI.ERR_RANK})",
                                True, True, False, MPI.ERR_UNKNOWN)


def test_session_pickles_only_when_null() -> None:
    import pickle

    import pytest
    assert pickle.loads(pickle.dumps(MPI.SESSION_NULL)) is MPI.SESSION_NULL

    def main() -> None:
        with pytest.raises(ValueError):
            pickle.dumps(MPI.Session.Init())
    bsim.simulate(main, 1)
