"""Communicators, groups, attributes and request lists give what mpi4py + MPICH give.

Each program's ``main()`` returns plain values; the literal expectations were read off
real ``mpiexec -n N`` (MPICH 4, mpi4py 4.1.2) and are what the MPI standard says where
it says it; they are compared again with real MPI when mpiexec and mpi4py are installed.
"""

from __future__ import annotations

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

FREE_KEYVAL = '''
from mpi4py import MPI


def main():
    log = []

    def keyval(name):
        return MPI.Comm.Create_keyval(
            copy_fn=lambda comm, key, value: (log.append(["copy", name, value]), value + 1)[1],
            delete_fn=lambda comm, key, value: log.append(["delete", name, value]))

    a, b, c = keyval("a"), keyval("b"), keyval("c")
    comm = MPI.COMM_WORLD.Dup()
    comm.Set_attr(a, 10)
    comm.Set_attr(b, 20)
    comm.Set_attr(c, 30)
    comm.Set_attr(a, 11)                     # replaced in its place: deletes 10
    freed = MPI.Comm.Free_keyval(b) == MPI.KEYVAL_INVALID
    dup = comm.Dup()                         # b is still set on comm: copied
    log.append("Dup")
    dup.Delete_attr(b)                       # ... and deleted by its callback
    log.append("Delete_attr")
    dup.Free()
    log.append("Free dup")
    comm.Free()
    return [freed, log]
'''


def test_free_keyval_keeps_the_callbacks_of_attributes_still_set():
    """``Free_keyval`` while an attribute is set with the key: ``Dup`` still copies it and
    ``Delete_attr``/``Free`` still call its delete callback (MPI 4.1 Sec. 7.7.2: the key
    is not deallocated until every attribute using it is deleted); bsim dropped the
    callbacks at once.  Callbacks run in the reverse order of setting, a replaced value
    keeping its place, and a duplicate keeps the order (as MPICH)."""
    log = [["delete", "a", 10],
           ["copy", "c", 30], ["copy", "b", 20], ["copy", "a", 11], "Dup",
           ["delete", "b", 21], "Delete_attr",
           ["delete", "c", 31], ["delete", "a", 12], "Free dup",
           ["delete", "c", 30], ["delete", "b", 20], ["delete", "a", 11]]
    assert simulated_returns(2, FREE_KEYVAL) == [[True, log], [True, log]]


BAD_KEYVALS = '''
from mpi4py import MPI


def error_class(fn):
    try:
        return ["returned", fn()]
    except MPI.Exception as exc:
        return exc.Get_error_class()


def main():
    world = MPI.COMM_WORLD
    comm_key = MPI.Comm.Create_keyval()
    type_key = MPI.Datatype.Create_keyval()
    win_key = MPI.Win.Create_keyval()
    return [error_class(lambda: world.Get_attr(123456)),
            error_class(lambda: world.Get_attr(type_key)),
            error_class(lambda: world.Get_attr(win_key)),
            error_class(lambda: world.Set_attr(type_key, 1)),
            error_class(lambda: world.Delete_attr(win_key)),
            error_class(lambda: world.Set_attr(MPI.TAG_UB, 1)),
            error_class(lambda: MPI.INT.Get_attr(comm_key)),
            error_class(lambda: MPI.INT.Get_attr(MPI.TAG_UB)),
            error_class(lambda: MPI.Comm.Free_keyval(123456)),
            error_class(lambda: MPI.Comm.Free_keyval(type_key)),
            error_class(lambda: world.Get_attr(comm_key)),
            error_class(lambda: MPI.INT.Get_attr(type_key))]
'''


def test_an_unknown_or_wrong_kind_keyval_is_err_keyval():
    """A key never created, or a datatype's or window's key given to a communicator (and
    the other way round), is ``MPI.Exception`` of class ``ERR_KEYVAL`` (48) in
    ``Get_attr``, ``Set_attr``, ``Delete_attr`` and ``Free_keyval``, as MPICH raises it
    (MPI 4.1 Sec. 7.7.5); bsim's ``Get_attr`` returned None.  A key of the right kind
    with no value set: None."""
    expected = [48] * 10 + [["returned", None]] * 2
    assert simulated_returns(2, BAD_KEYVALS) == [expected, expected]


INTRACOMM_ONLY = '''
from mpi4py import MPI

NAMES = ["scan", "exscan", "Scan", "Exscan", "Iscan", "Iexscan", "Scan_init", "Exscan_init",
         "Create_group", "Create_cart"]


def main():
    world = MPI.COMM_WORLD
    r = world.rank
    local = world.Split(r % 2, r)
    ic = local.Create_intercomm(0, world, 1 - r % 2, tag=7)
    where = {name: [hasattr(MPI.Comm, name), hasattr(MPI.Intercomm, name),
                    hasattr(ic, name), hasattr(MPI.Intracomm, name), hasattr(local, name)]
             for name in NAMES}
    try:
        ic.Create_cart([ic.size])
        cart = "no error"
    except AttributeError:
        cart = "AttributeError"
    scanned = local.scan(r)
    ic.Free()
    local.Free()
    return [where, cart, scanned]
'''


def test_intercommunicators_have_no_intracommunicator_calls():
    """The scans, ``Create_group`` and ``Create_cart`` are ``Intracomm`` methods in mpi4py,
    absent from ``Comm`` and ``Intercomm`` (MPI 4.1 Sec. 6.2.2 defines no scan on an
    intercommunicator): calling one on an intercommunicator is an ``AttributeError``.
    bsim had them on ``Comm``; ``Create_cart`` on an intercommunicator deadlocked at 4
    ranks."""
    out = simulated_returns(4, INTRACOMM_ONLY)
    where = {name: [False, False, False, True, True] for name in
             ["scan", "exscan", "Scan", "Exscan", "Iscan", "Iexscan", "Scan_init",
              "Exscan_init", "Create_group", "Create_cart"]}
    assert out == [[where, "AttributeError", 0], [where, "AttributeError", 1],
                   [where, "AttributeError", 2], [where, "AttributeError", 4]]


CREATE_GROUP = '''
from mpi4py import MPI


def attempt(fn):
    try:
        comm = fn()
    except MPI.Exception as exc:
        return exc.Get_error_class()
    if comm == MPI.COMM_NULL:
        return "COMM_NULL"
    out = [comm.rank, comm.size]
    comm.Free()
    return out


def main():
    world = MPI.COMM_WORLD
    low = world.group.Incl([0, 1])
    return [attempt(lambda: world.Create_group(low)),
            attempt(lambda: world.Create_group(MPI.GROUP_EMPTY)),
            attempt(lambda: world.Create_group(world.group, tag=-1)),
            attempt(lambda: world.Create_group(low, tag=-1))]
'''


def test_create_group_outside_the_group_is_comm_null_and_checks_the_tag():
    """``Create_group`` by a process outside the group returns ``COMM_NULL`` (MPI 4.1 Sec.
    7.4.2: a local operation; MPICH), where bsim raised; a negative tag is ``ERR_TAG`` (4)
    for every caller, as MPICH checks it, where bsim accepted it."""
    assert simulated_returns(3, CREATE_GROUP) == [
        [[0, 2], "COMM_NULL", 4, 4], [[1, 2], "COMM_NULL", 4, 4],
        ["COMM_NULL", "COMM_NULL", 4, 4]]


# programs whose every rank's return must be the same under bsim and real mpiexec -n N
SAME_AS_REAL = {
    "free-keyval": (FREE_KEYVAL, 2),
    "bad-keyvals": (BAD_KEYVALS, 2),
    "intracomm-only": (INTRACOMM_ONLY, 4),
    "create-group": (CREATE_GROUP, 3),
}


@needs_mpiexec
@pytest.mark.parametrize("case", SAME_AS_REAL)
def test_the_program_returns_what_real_mpi_returns(case):
    code, n = SAME_AS_REAL[case]
    assert real_mpi_returns(n, code) == simulated_returns(n, code, as_json=True)
