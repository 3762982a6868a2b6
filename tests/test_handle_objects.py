"""Handle objects of every kind follow mpi4py 4.1.2's object model, as under real MPI.

The same program runs under real ``mpiexec`` (mpi4py on MPICH) and under bsim: handle
values of the predefined objects (MPICH's), ``fromhandle``/``fromint`` round trips,
unhashable handles, weak references, ``free()`` of constants, copies and created objects,
pickled copies, constructor type checks, handles written through ``MPI._addressof`` (a
live request's too: compiled, ``Request`` is an extension type whose comparison cannot be
wrapped, so its ``__eq__`` reads the written handle itself) and Fortran statuses must give
the same answers.
"""

from __future__ import annotations

import json

import pytest
from conftest import needs_mpiexec, real_mpi_returns

import bsim
from bsim import MPI

PROGRAM = '''
import ctypes
import pickle
import weakref
from mpi4py import MPI


def unhashable(obj):
    try:
        hash(obj)
    except TypeError:
        return True
    return False


def main():
    consts = [MPI.COMM_NULL, MPI.COMM_SELF, MPI.COMM_WORLD, MPI.GROUP_NULL, MPI.GROUP_EMPTY,
              MPI.OP_NULL, MPI.SUM, MPI.MAXLOC, MPI.REQUEST_NULL, MPI.MESSAGE_NULL,
              MPI.MESSAGE_NO_PROC, MPI.INT, MPI.DATATYPE_NULL, MPI.SESSION_NULL]
    out = {"handles": [c.handle for c in consts],
           "roundtrip": [type(c).fromhandle(c.handle) == c and type(c).fromint(c.toint()) == c
                         for c in consts],
           "unhashable": [unhashable(c) for c in consts + [MPI.Status(), MPI.INFO_ENV]],
           "weakref": [weakref.ref(c)() is c for c in consts + [MPI.Status()]],
           "falsy_nulls": [bool(c) for c in consts]}
    freed = []
    for const in (MPI.COMM_WORLD, MPI.SUM, MPI.GROUP_EMPTY, MPI.INT, MPI.MESSAGE_NO_PROC):
        const.free()
        copy = type(const)(const)
        copy.free()
        freed.append([bool(const), bool(copy)])
    created = [MPI.COMM_SELF.Dup(), MPI.Op.Create(lambda a, b, t: None),
               MPI.COMM_SELF.Get_group(), MPI.INT.Dup(),
               MPI.COMM_SELF.Isend([None, 0, MPI.BYTE], MPI.PROC_NULL)]
    for obj in created:
        before = bool(obj)
        obj.free()
        freed.append([before, bool(obj)])
    out["free"] = freed
    checks = []
    for cls in (MPI.Comm, MPI.Group, MPI.Op, MPI.Request, MPI.Message, MPI.Datatype,
                MPI.Status, MPI.Session):
        for bad in (1234, "abc", MPI.INFO_NULL):
            try:
                cls(bad)
                checks.append("ok")
            except TypeError:
                checks.append("TypeError")
    out["constructors"] = checks
    out["pickled"] = [type(pickle.loads(pickle.dumps(type(c)(c)))) is type(c) for c in consts]
    writes = []   # a handle written into another object's handle memory makes it that handle
    status = MPI.Status()
    for const in (MPI.INT, MPI.SUM, MPI.COMM_WORLD, MPI.GROUP_EMPTY, MPI.INFO_ENV):
        new = type(const)()
        value = ctypes.c_int.from_address(MPI._addressof(const)).value
        ctypes.c_int.from_address(MPI._addressof(new)).value = value
        writes.append([value == ctypes.c_int(MPI._handleof(const)).value, new == const,
                       MPI._addressof(status) != 0, new != status])
    out["ctypes"] = writes
    comm = MPI.COMM_WORLD   # a live request's handle written into a new Request's memory
    req = comm.Irecv(bytearray(8), source=comm.Get_rank(), tag=77)
    new = MPI.Request()
    ctypes.c_int.from_address(MPI._addressof(new)).value = \
        ctypes.c_int.from_address(MPI._addressof(req)).value
    out["request_written"] = [new == req, new != req, new != MPI.REQUEST_NULL]
    comm.Send(bytearray(8), dest=comm.Get_rank(), tag=77)
    req.Wait()
    status = MPI.Status()
    status.source, status.tag = 3, 5
    out["status"] = [status.py2f()[MPI.F_SOURCE], status.py2f()[MPI.F_TAG],
                     MPI.Status.f2py(status.py2f()) == status, MPI.Status() == MPI.Status()]
    return out
'''


def _bsim() -> list:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return json.loads(json.dumps(bsim.simulate(namespace["main"], 2).returns))


@needs_mpiexec
def test_handle_objects_equal_real_mpi():
    """Every answer of the program is real mpi4py's."""
    assert real_mpi_returns(2, PROGRAM) == _bsim()


def test_handle_objects_by_hand():
    """MPICH's handle values; free() spares constants, nulls copies, frees created ones."""
    out = _bsim()[0]
    assert out["handles"][:3] == [0x04000000, 0x44000001, 0x44000000]   # MPI_COMM_NULL ...
    assert out["handles"][6] == 0x58000003                                  # MPI_SUM
    assert all(out["roundtrip"]) and all(out["unhashable"]) and all(out["weakref"])
    assert out["free"] == [[True, False]] * 5 + [[True, False]] * 5
    assert out["constructors"] == ["TypeError"] * 24
    assert out["status"] == [3, 5, True, True] and all(out["pickled"])
    assert out["ctypes"] == [[True] * 4] * 5
    assert out["request_written"] == [True, False, True]


def test_stand_in_null_handles():
    """FILE_NULL and SESSION_NULL are null handles, unhashable as mpi4py's."""
    assert MPI.File() == MPI.FILE_NULL and not MPI.SESSION_NULL and MPI.Session() != MPI.File()
    with pytest.raises(TypeError):
        hash(MPI.FILE_NULL)
    with pytest.raises(TypeError):
        hash(MPI.SESSION_NULL)
    assert MPI.Grequest(MPI.REQUEST_NULL) == MPI.REQUEST_NULL
