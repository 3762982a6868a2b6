"""Communicator names, info hints, predefined attributes, tags and a few error classes give
what mpi4py + MPICH give (an outside review, /tmp/rv_comm items 3, 11, 13, 14).

Each program's ``main()`` returns plain values; the literal expectations were read off
real ``mpiexec -n N`` (MPICH 5.0.2, mpi4py 4.1.2); they are compared again with real MPI
when mpiexec and mpi4py are installed.
"""

from __future__ import annotations

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

NAMES = '''
from mpi4py import MPI


def main():
    world = MPI.COMM_WORLD
    r = world.Get_rank()
    mine = world.Dup()
    if r == 0:
        mine.Set_name("mine")                  # a name belongs to the process that sets it
    ic = world.Split(r % 2, 0).Create_intercomm(0, world, 1 - r % 2)
    self_dup = MPI.COMM_SELF.Dup()
    self_dup.name = "self dup"
    return [world.Get_name(), MPI.COMM_SELF.Get_name(), world.name,
            world.Dup().Get_name(), world.Split(0, r).name, world.Create(world.group).name,
            world.Create_group(world.group).Get_name(), world.Idup()[0].Get_name(),
            world.Create_cart([world.size]).Get_name(), mine.Get_name(), mine.Dup().name,
            ic.Get_name(), ic.Merge().Get_name(), self_dup.Get_name(), self_dup.name]
'''


def test_communicator_names_are_mpichs():
    """``Get_name``/``name``: ``MPI_COMM_WORLD`` and ``MPI_COMM_SELF`` for the predefined
    communicators, ``''`` for every new one, the name set with ``Set_name`` on the
    process that set it (MPI 4.1 Sec. 7.8); bsim gave its labels (``WORLD.Dup``), which
    ``repr`` (and so its error messages) keeps."""
    def row(mine):
        return ["MPI_COMM_WORLD", "MPI_COMM_SELF", "MPI_COMM_WORLD", "", "", "", "", "", "",
                mine, "", "", "", "self dup", "self dup"]
    assert simulated_returns(2, NAMES) == [row("mine"), row("")]
    # bsim's own label still names the communicator in repr and errors
    import bsim
    from bsim import MPI

    def main():
        dup = MPI.COMM_WORLD.Dup()
        renamed = dup.Dup()
        renamed.Set_name("mine")
        return [repr(dup), repr(renamed.Dup())]

    out = bsim.simulate(main, 2, protocol="bsim").returns[0]
    assert "WORLD.Dup" in out[0] and "mine.Dup" in out[1]


# a program's error_class(fn): the MPI error class of fn's MPI.Exception, "ok",
# or another exception's type name (the same under bsim and real mpiexec)
ERROR_CLASS = '''

def error_class(fn):
    try:
        fn()
        return "ok"
    except MPI.Exception as exc:
        return exc.Get_error_class()
    except Exception as exc:
        return type(exc).__name__
'''

ATTRIBUTES = '''
from mpi4py import MPI
''' + ERROR_CLASS + '''


def main():
    world = MPI.COMM_WORLD
    out = [[comm.Get_attr(k) for k in (MPI.TAG_UB, MPI.WTIME_IS_GLOBAL, MPI.UNIVERSE_SIZE,
                                       MPI.APPNUM, MPI.IO)]
           for comm in (world, MPI.COMM_SELF, world.Dup())]
    peer, ub = 1 - world.Get_rank(), 536870911
    byte = [bytearray(1), MPI.BYTE]
    out += [error_class(lambda: world.send(1, dest=peer, tag=ub + 1)),
            error_class(lambda: world.Send(byte, dest=peer, tag=ub + 1)),
            error_class(lambda: world.Isend(byte, dest=peer, tag=ub + 1)),
            error_class(lambda: world.Recv(byte, source=peer, tag=ub + 1)),
            error_class(lambda: world.Irecv(byte, source=peer, tag=ub + 1)),
            error_class(lambda: world.Iprobe(source=peer, tag=ub + 1)),
            error_class(lambda: world.Sendrecv(byte, peer, ub + 1, byte, peer, 0)),
            error_class(lambda: world.Create_group(world.group, tag=ub + 1))]
    world.Sendrecv(byte, peer, ub, byte, peer, ub)          # TAG_UB itself is valid
    return out + [error_class(lambda: world.Create_group(world.group, tag=ub))]
'''


def test_predefined_attributes_and_tag_ub_are_mpichs():
    """``TAG_UB`` is MPICH's 536870911 on every communicator and a larger tag is
    ``ERR_TAG`` (4) in every call; ``WTIME_IS_GLOBAL`` 0 and ``UNIVERSE_SIZE`` None under
    MPICH's mpiexec (MPI 4.1 Sec. 9.1.1, 11.10.1); bsim gave 2**31 - 1, True and the
    world size, and accepted tags up to 2**31 - 1."""
    row = [[536870911, 0, None, 0, -2]] * 3 + [4] * 8 + ["ok"]   # IO: ANY_SOURCE
    assert simulated_returns(2, ATTRIBUTES) == [row, row]

HINTS = '''
from mpi4py import MPI


def main():
    world = MPI.COMM_WORLD
    info = MPI.Info.Create()
    for key, value in [("mpi_assert_no_any_tag", "true"), ("mpi_assert_allow_overtaking", "1"),
                       ("mpi_assert_exact_length", "TRUE"), ("my_key", "v"),
                       ("multi_nic_pref_nic", "3"), ("vci", "3"),
                       ("mpi_memory_alloc_kinds", "mpi")]:
        info.Set(key, value)
    hinted = world.Dup_with_info(info)
    out = [sorted(world.Get_info().items()), sorted(hinted.Get_info().items())]
    only = MPI.Info.Create()
    only.Set("mpi_assert_no_any_source", "true")
    hinted.Set_info(only)                       # the others stay
    out.append(sorted(hinted.Get_info().items()))
    out.append([c.Get_info().Get("mpi_assert_no_any_tag")
                for c in (hinted.Dup(), hinted.Split(0, 0), hinted.Create_cart([world.size]),
                          world.Dup(info), world.Idup_with_info(info)[0])])
    ic = world.Split(world.rank % 2, 0).Create_intercomm(0, world, 1 - world.rank % 2)
    out.append(ic.Dup_with_info(info).Get_info().Get("mpi_assert_no_any_tag"))
    if world.rank == 0:
        MPI.COMM_SELF.Set_info(only)            # hints belong to the process
    out.append(MPI.COMM_SELF.Get_info().Get("mpi_assert_no_any_source"))
    try:
        world.Set_info(MPI.INFO_NULL)
        out.append("ok")
    except MPI.Exception as exc:
        out.append(exc.Get_error_class())
    out.append(world.Dup_with_info(MPI.INFO_NULL).Get_info().Get("mpi_assert_no_any_tag"))
    return out
'''

_DEFAULTS = {"enable_multi_nic_hashing": "true", "enable_multi_nic_striping": "true",
             "mpi_assert_allow_overtaking": "false", "mpi_assert_exact_length": "false",
             "mpi_assert_no_any_source": "false", "mpi_assert_no_any_tag": "false",
             "mpi_assert_strict_persistent_collective_ordering": "false",
             "mpi_memory_alloc_kinds": "mpi,system", "multi_nic_pref_nic": "-1",
             "receiver_vci": "-1", "sender_vci": "-1", "vci": "-1"}


def _hints(**changed: str) -> list[list[str]]:
    return [list(kv) for kv in sorted({**_DEFAULTS, **changed}.items())]


def test_communicator_hints_are_kept_as_mpich_keeps_them():
    """``Dup_with_info``/``Set_info`` then ``Get_info`` give MPICH's twelve hints with the
    ones set (read as MPICH reads them: ``"1"`` true, ``"TRUE"`` false, an unknown key
    dropped, the VCI ``"0"``), ``Set_info`` keeps the others, a new communicator starts
    from the defaults, and ``Set_info(INFO_NULL)`` is ``ERR_ARG`` (MPI 4.1 Sec. 7.4.4);
    bsim dropped every hint and ``Get_info`` was empty."""
    hinted = dict(mpi_assert_no_any_tag="true", mpi_assert_allow_overtaking="true",
                  multi_nic_pref_nic="3", vci="0", sender_vci="0", receiver_vci="0")
    out = simulated_returns(2, HINTS, as_json=True)
    for rank, self_hint in enumerate(["true", "false"]):
        assert out[rank] == [_hints(), _hints(**hinted),
                             _hints(**hinted, mpi_assert_no_any_source="true"),
                             ["false", "false", "false", "true", "true"], "true",
                             self_hint, 12, "false"]


ERRORS = '''
from mpi4py import MPI
import numpy as np
''' + ERROR_CLASS + '''


def main():
    world = MPI.COMM_WORLD
    r = world.Get_rank()
    out = [error_class(lambda: world.Split(0, 2**31 + r)),
           error_class(lambda: world.Split(2**31, r)),
           error_class(lambda: world.Split(0, 2**31 - 1))]
    comm = world.Dup()
    comm.Free()
    out += [error_class(comm.Free), error_class(comm.Get_size)]
    out += [error_class(h.Free) for h in (MPI.ERRORS_RETURN, MPI.ERRORS_ARE_FATAL)]
    out.append(MPI.ERRORS_RETURN == MPI.ERRHANDLER_NULL)
    alone = world.Split(r, 0)
    out.append(error_class(lambda: alone.Create_intercomm(0, world, r)))
    info = MPI.Info.Create()
    info.Set("a", "b")
    info.Free()
    out += [error_class(lambda: info.Get("a")), error_class(lambda: info.Set("a", "c")),
            error_class(info.Get_nkeys), error_class(MPI.INFO_ENV.Free)]
    out += [list(MPI.Get_version()), [MPI.VERSION, MPI.SUBVERSION]]
    if r == 0:
        world.Send(np.arange(10, dtype="i"), dest=1, tag=8)
    else:
        buf = np.full(4, -1, dtype="i")
        req = world.Irecv(buf, source=0, tag=8)
        world.recv(source=0, tag=9)                # the message has arrived
        status = MPI.Status()
        out += [error_class(lambda: req.Get_status(status)), [status.source, status.tag],
                error_class(req.Get_status), error_class(req.Wait)]
    if r == 0:
        world.send(None, dest=1, tag=9)
    return out
'''


def test_error_classes_are_mpichs():
    """Split with a key or color beyond a C int: ``OverflowError``; a second ``Free`` (and
    any use) of a freed communicator: ``ERR_COMM`` (5, the handle is null); freeing a
    predefined error handler: nothing; ``Create_intercomm`` with the caller as remote
    leader: ``ERR_RANK`` (6); a freed info: ``ERR_ARG`` (12; ``INFO_ENV.Free`` stays
    ``ERR_INFO``, 28); ``Get_version()`` (5, 0) as MPICH 5 reports it; ``Get_status`` on a
    truncated receive: ``ERR_TRUNCATE`` (14), the status filled, and again, and at
    ``Wait``.  bsim accepted the splits, gave 15, ``ERR_ERRHANDLER``, ``ERR_COMM``,
    ``ERR_INFO``, (4, 1) and True."""
    head = ["OverflowError", "OverflowError", "ok", 5, 5, "ok", "ok", False, 6,
            12, 12, 12, 28, [5, 0], [4, 1]]
    assert simulated_returns(2, ERRORS) == [head, head + [14, [0, 8], 14, 14]]


SAME_AS_REAL = {"names": (NAMES, 2), "attributes": (ATTRIBUTES, 2), "hints": (HINTS, 2),
                "errors": (ERRORS, 2), "names_3": (NAMES, 3)}


@needs_mpiexec
@pytest.mark.parametrize("case", SAME_AS_REAL)
def test_the_program_returns_what_real_mpi_returns(case):
    code, n = SAME_AS_REAL[case]
    assert real_mpi_returns(n, code) == simulated_returns(n, code, as_json=True)
