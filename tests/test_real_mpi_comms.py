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


WAITALL_TRUNCATED = '''
from mpi4py import MPI
import numpy as np


def requests(comm, r):
    return [comm.Isend(np.arange(4, dtype="i4"), dest=r, tag=1),
            comm.Irecv(np.zeros(2, "i4"), source=r, tag=1),       # 16 bytes into 8
            comm.Isend(np.arange(2, dtype="i4"), dest=r, tag=2),
            comm.Irecv(np.zeros(2, "i4"), source=r, tag=2)]


def settled(reqs):
    for req in reqs:   # until each is complete (the truncated one raises)
        while True:
            try:
                if req.Get_status():
                    break
            except MPI.Exception:
                break
    return reqs


def finish(reqs):
    for req in reqs:
        if req:
            req.Wait()


def main():
    world = MPI.COMM_WORLD
    r = world.rank
    comm = world.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    out = {}
    for call in ["Waitall", "waitall", "Testall", "Waitsome", "Testsome", "Waitall-ignore"]:
        reqs = settled(requests(comm, r))
        statuses = [MPI.Status() for _ in reqs]
        try:
            if call == "Waitall-ignore":
                MPI.Request.Waitall(reqs)
            else:
                getattr(MPI.Request, call)(reqs, statuses)
            raised = "no error"
        except MPI.Exception as exc:
            raised = exc.Get_error_class()
        out[call] = [raised,
                     [[s.Get_source(), s.Get_tag(), MPI.Get_error_class(s.Get_error()),
                       s.Get_count(MPI.INT)] for s in statuses],
                     [bool(req) for req in reqs]]
        finish(reqs)
    comm.Free()
    return out
'''


def test_a_truncated_receive_in_a_request_list_is_err_in_status():
    """A truncated receive completed by ``Waitall``, ``Testall``, ``Waitsome`` or
    ``Testsome`` raises ``ERR_IN_STATUS`` (17) and sets each status's error field (MPI
    4.1 Sec. 3.2.5, 3.7.5): ``ERR_TRUNCATE`` (14) for the receive, ``SUCCESS`` for the
    others; ``Waitall`` given statuses stops there, as MPICH does, leaving the later
    requests active with ``ERR_PENDING`` (18).  bsim raised ``ERR_TRUNCATE`` and left
    every status empty."""
    def ok(r):
        return [[-2, -1, 0, 0], [r, 1, 14, 2], [-2, -1, 0, 0], [r, 2, 0, 2]]

    def stopped(r):
        return [[-2, -1, 0, 0], [r, 1, 14, 2], [-2, -1, 18, 0], [-2, -1, 18, 0]]

    empty = [[-2, -1, 0, 0]] * 4
    done = [False] * 4
    expected = [{"Waitall": [17, stopped(r), [False, False, True, True]],
                 "waitall": [17, stopped(r), [False, False, True, True]],
                 "Testall": [17, ok(r), done], "Waitsome": [17, ok(r), done],
                 "Testsome": [17, ok(r), done], "Waitall-ignore": [17, empty, done]}
                for r in range(2)]
    assert simulated_returns(2, WAITALL_TRUNCATED) == expected


RANGE_TRIPLES = '''
from mpi4py import MPI


def size_or_class(fn):
    try:
        return fn().Get_size()
    except MPI.Exception as exc:
        return exc.Get_error_class()


def main():
    group = MPI.COMM_WORLD.group
    n = group.size
    return [size_or_class(lambda: group.Range_incl([(n - 1, 0, 1)])),
            size_or_class(lambda: group.Range_excl([(n - 1, 0, 1)])),
            size_or_class(lambda: group.Range_incl([(0, n - 1, -1)])),
            size_or_class(lambda: group.Range_excl([(0, n - 1, -1)])),
            size_or_class(lambda: group.Range_incl([(n - 1, 0, -1)])),
            size_or_class(lambda: group.Range_incl([(1, 1, -5)])),
            size_or_class(lambda: group.Range_incl([(0, n - 1, 10)]))]
'''


def test_a_range_triple_whose_stride_leads_away_is_err_arg():
    """``Range_incl``/``Range_excl`` of ``(first, last, stride)`` with first > last and a
    positive stride (or first < last and a negative one) is ``ERR_ARG`` (12), as MPICH
    refuses it; bsim gave an empty range.  Descending with a negative stride, one rank,
    and a stride past *last* are ranges (3, 1, 1 ranks)."""
    assert simulated_returns(3, RANGE_TRIPLES) == [[12, 12, 12, 12, 3, 1, 1]] * 3


# programs whose every rank's return must be the same under bsim and real mpiexec -n N
SAME_AS_REAL = {"free-keyval": (FREE_KEYVAL, 2), "bad-keyvals": (BAD_KEYVALS, 2),
                "intracomm-only": (INTRACOMM_ONLY, 4), "create-group": (CREATE_GROUP, 3),
                "waitall-truncated": (WAITALL_TRUNCATED, 2),
                "range-triples": (RANGE_TRIPLES, 3)}


@needs_mpiexec
@pytest.mark.parametrize("case", SAME_AS_REAL)
def test_the_program_returns_what_real_mpi_returns(case):
    code, n = SAME_AS_REAL[case]
    assert real_mpi_returns(n, code) == simulated_returns(n, code, as_json=True)
