"""Attributes and keyvals (bsim/mpi/common/attributes.py): MPI 4.0 Sec. 7.7 rules, per rank."""

from __future__ import annotations

import bsim
from bsim import MPI


def test_per_rank_values_copy_rules_and_delete_callbacks():
    deleted = []

    def main():
        comm = MPI.COMM_WORLD
        r = comm.rank
        keep = comm.Create_keyval(copy_fn=True)
        drop = comm.Create_keyval(copy_fn=None, delete_fn=lambda o, k, v: deleted.append(v))
        twice = comm.Create_keyval(copy_fn=lambda o, k, v: 2 * v)
        none = comm.Create_keyval(copy_fn=lambda o, k, v: NotImplemented)
        for k in (keep, drop, twice, none):
            comm.Set_attr(k, 10 + r)
        dup = comm.Dup()
        got = [dup.Get_attr(k) for k in (keep, drop, twice, none)]
        comm.Set_attr(drop, 20 + r)      # replacing runs the delete callback on the old value
        comm.Delete_attr(drop)
        after = comm.Get_attr(drop)
        dup.Free()
        return got, after, comm.Free_keyval(keep) == MPI.KEYVAL_INVALID

    out = bsim.simulate(main, 2).returns
    assert out[0] == ([10, None, 20, None], None, True)
    assert out[1] == ([11, None, 22, None], None, True)      # each rank its own values
    assert sorted(deleted) == [10, 11, 20, 21]


def test_predefined_world_attributes():
    def main():
        w = MPI.COMM_WORLD
        return [w.Get_attr(k) for k in (MPI.TAG_UB, MPI.HOST, MPI.IO, MPI.WTIME_IS_GLOBAL,
                                        MPI.UNIVERSE_SIZE, MPI.APPNUM)]

    # MPICH's values under mpiexec (TAG_UB 2**29 - 1, WTIME_IS_GLOBAL 0, no UNIVERSE_SIZE)
    assert bsim.simulate(main, 3).returns[0] == [536870911, MPI.PROC_NULL, MPI.ANY_SOURCE,
                                                 0, None, 0]


def test_datatype_attributes_follow_dup():
    def main():
        k = MPI.Datatype.Create_keyval(copy_fn=True)
        t = MPI.DOUBLE.Dup()
        t.Set_attr(k, "x")
        return t.Dup().Get_attr(k), MPI.DOUBLE.Get_attr(k)

    assert bsim.simulate(main, 1).returns == [("x", None)]


def test_a_callback_exception_is_mpi_exception(capsys):
    """A copy or delete callback that raises: its traceback on stderr, then MPI.Exception
    with ERR_OTHER (as mpi4py 4.1 does); on a communicator and on a window alike."""
    def boom(o, k, v):
        raise ValueError("boom")

    def main():
        comm = MPI.COMM_WORLD
        out = []
        win = MPI.Win.Create(None, 1, MPI.INFO_NULL, MPI.COMM_SELF)
        for obj, key in ((comm, comm.Create_keyval(delete_fn=boom)),
                         (win, MPI.Win.Create_keyval(delete_fn=boom))):
            obj.Set_attr(key, 1)
            try:
                obj.Delete_attr(key)
            except MPI.Exception as exc:
                out.append(exc.Get_error_class() == MPI.ERR_OTHER)
        key = comm.Create_keyval(copy_fn=boom)
        comm.Set_attr(key, 1)
        try:
            comm.Dup()
        except MPI.Exception as exc:
            out.append("copy callback" in str(exc))
        win.Free()
        return out

    assert bsim.simulate(main, 1).returns == [[True, True, True]]
    assert "ValueError: boom" in capsys.readouterr().err
