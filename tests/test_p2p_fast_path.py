"""The flattened ``Isend``/``Irecv``/``Waitall`` path (bsim/mpi/p2p/calls.py,
bsim/mpi/requests/request.py).

A placeholder ``bsim.Buffer`` or a numpy array sent to or received from a plain world
rank skips the general call path (argument conversion, communicator lookups; a
placeholder also the buffer parsing).  These tests hold it to the general path: the same
program written with the ``[None, count, datatype]`` placeholder spec or the
``[array, datatype]`` spec (which the fast path does not take) must give the same
prediction to the last bit, under every protocol and with contention, and arrays the same
data; the fast path must really be taken; and what it does not handle
(bad ranks and tags, numpy ints, after ``Finalize``) must still
reach the general path's checks and errors.  ``PROC_NULL`` it takes (a request complete at
once), with the general path's status.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import bsim
from bsim import MPI
from bsim.constants import TAG_UB
from bsim.errors import MPIUsageError
from bsim.mpi.p2p import calls as p2p


def _edge(count: int, placeholder: bool) -> Any:
    """A receive or send buffer of *count* doubles: a ``bsim.Buffer`` (the flattened path)
    or the ``[None, count, datatype]`` spec of the same placeholder (the general path)."""
    return bsim.Buffer(count, MPI.DOUBLE) if placeholder else [None, count, MPI.DOUBLE]


def _halo(px: int, py: int, iterations: int, placeholder: bool, split: bool = False) -> Any:
    """A 2-D halo exchange with edges of unequal sizes; *placeholder* picks the buffer form,
    *split* runs it on a communicator whose ranks are the world's in reverse order."""
    def main() -> float:
        comm = MPI.COMM_WORLD
        if split:
            comm = comm.Split(0, key=-comm.Get_rank())
        rank = comm.Get_rank()
        i, j = rank % px, rank // px
        west = rank - 1 if i > 0 else MPI.PROC_NULL
        east = rank + 1 if i < px - 1 else MPI.PROC_NULL
        south = rank - px if j > 0 else MPI.PROC_NULL
        north = rank + px if j < py - 1 else MPI.PROC_NULL
        for it in range(iterations):
            n = 100 * (1 + (rank + it) % 3)     # sizes that differ by rank and iteration
            reqs = [comm.Irecv(_edge(300, placeholder), source=west, tag=1),
                    comm.Irecv(_edge(300, placeholder), source=east, tag=2),
                    comm.Irecv(_edge(300, placeholder), source=south, tag=3),
                    comm.Irecv(_edge(300, placeholder), source=north, tag=4)]
            reqs += [comm.Isend(_edge(n, placeholder), dest=east, tag=1),
                     comm.Isend(_edge(n, placeholder), dest=west, tag=2),
                     comm.Isend(_edge(n, placeholder), dest=north, tag=3),
                     comm.Isend(_edge(n, placeholder), dest=south, tag=4)]
            MPI.Request.Waitall(reqs)
            bsim.add_time(1e-6 * (1 + rank % 5))
        return MPI.Wtime()
    return main


def _pipeline(stages: int, placeholder: bool, split: bool = False) -> Any:
    """A wavefront of blocking ``Recv``/``Send`` (Sweep3D's pattern) with sizes that vary."""
    def main() -> float:
        comm = MPI.COMM_WORLD
        if split:
            comm = comm.Split(0, key=-comm.Get_rank())
        rank, size = comm.Get_rank(), comm.Get_size()
        for s in range(stages):
            if rank > 0:
                comm.Recv(_edge(500, placeholder), source=rank - 1, tag=s)
            bsim.add_time(1e-6 * (1 + (rank + s) % 4))
            if rank < size - 1:
                comm.Send(_edge(100 * (1 + (rank * s) % 5), placeholder), dest=rank + 1, tag=s)
        return MPI.Wtime()
    return main


def _sendrecv_halo(px: int, py: int, iterations: int, placeholder: bool,
                   split: bool = False) -> Any:
    """The halo as four blocking ``Sendrecv`` an iteration, sizes varying by rank."""
    def main() -> float:
        comm = MPI.COMM_WORLD
        if split:
            comm = comm.Split(0, key=-comm.Get_rank())
        rank = comm.Get_rank()
        i, j = rank % px, rank // px
        west = rank - 1 if i > 0 else MPI.PROC_NULL
        east = rank + 1 if i < px - 1 else MPI.PROC_NULL
        south = rank - px if j > 0 else MPI.PROC_NULL
        north = rank + px if j < py - 1 else MPI.PROC_NULL
        for it in range(iterations):
            n = 100 * (1 + (rank + it) % 3)
            for dest, source, tag in ((east, west, 1), (west, east, 2), (north, south, 3),
                                      (south, north, 4)):
                comm.Sendrecv(_edge(n, placeholder), dest=dest, sendtag=tag,
                              recvbuf=_edge(300, placeholder), source=source, recvtag=tag)
            bsim.add_time(1e-6 * (1 + rank % 5))
        return MPI.Wtime()
    return main


def _array_halo(px: int, py: int, iterations: int, bare: bool, split: bool = False) -> Any:
    """The halo with real data: numpy arrays passed bare (the flattened path) or as
    ``[array, MPI.DOUBLE]`` (the general one), sizes varying by rank and iteration; each
    rank returns the sum of what it received from each side and its clock."""
    def main() -> list[float]:
        comm = MPI.COMM_WORLD
        if split:
            comm = comm.Split(0, key=-comm.Get_rank())
        rank = comm.Get_rank()
        i, j = rank % px, rank // px
        sides = [(rank - 1 if i > 0 else MPI.PROC_NULL, 1), (rank + 1 if i < px - 1 else
                                                             MPI.PROC_NULL, 2),
                 (rank - px if j > 0 else MPI.PROC_NULL, 3),
                 (rank + px if j < py - 1 else MPI.PROC_NULL, 4)]
        got = [0.0] * 4
        for it in range(iterations):
            n = 10 * (1 + (rank + it) % 3)
            into = [np.zeros(30) for _ in sides]
            reqs = [comm.Irecv(into[k] if bare else [into[k], MPI.DOUBLE], source=peer,
                               tag=tag) for k, (peer, tag) in enumerate(sides)]
            for peer, tag in sides:   # to the west with the east's tag, and so on
                out = np.full(n, float(rank))
                back = {1: 2, 2: 1, 3: 4, 4: 3}[tag]
                reqs.append(comm.Isend(out if bare else [out, MPI.DOUBLE], dest=peer,
                                       tag=back))
            MPI.Request.Waitall(reqs)
            got = [g + float(a.sum()) for g, a in zip(got, into)]
            bsim.add_time(1e-6 * (1 + rank % 5))
        return [*got, MPI.Wtime()]
    return main


def _fingerprint(res: Any) -> tuple[Any, ...]:
    return (res.finish.tolist(), res.calc.tolist(), res.wait.tolist(), res.comm.tolist(),
            res.ops.tolist(), res.messages.tolist(), res.bytes.tolist(), res.returns)


@pytest.mark.parametrize("setting", [
    dict(),
    dict(protocol="loggp"),
    dict(network="torus:dims=4x4", contention="fluid"),
    dict(network="torus:dims=4x4", protocol="loggp", contention="fluid"),
])
def test_fast_path_predicts_what_the_general_path_predicts(setting: dict[str, Any]) -> None:
    # the sent sizes differ by rank and iteration, so anything the fast path charged
    # differently (a size, a time, an order of deliveries) would show in the clocks
    for split in (False, True):
        fast = bsim.simulate(_halo(4, 4, 3, True, split), 16, **setting)
        general = bsim.simulate(_halo(4, 4, 3, False, split), 16, **setting)
        assert _fingerprint(fast) == _fingerprint(general)
        assert fast.elapsed > 0.0
        fast = bsim.simulate(_pipeline(6, True, split), 16, **setting)
        general = bsim.simulate(_pipeline(6, False, split), 16, **setting)
        assert _fingerprint(fast) == _fingerprint(general)
        assert fast.elapsed > 0.0
        fast = bsim.simulate(_sendrecv_halo(4, 4, 3, True, split), 16, **setting)
        general = bsim.simulate(_sendrecv_halo(4, 4, 3, False, split), 16, **setting)
        assert _fingerprint(fast) == _fingerprint(general)
        assert fast.elapsed > 0.0


@pytest.mark.parametrize("setting", [dict(), dict(protocol="loggp")])
def test_arrays_on_the_fast_path_move_and_cost_what_the_general_path_does(
        setting: dict[str, Any]) -> None:
    for split in (False, True):
        fast = bsim.simulate(_array_halo(4, 4, 3, True, split), 16, **setting)
        general = bsim.simulate(_array_halo(4, 4, 3, False, split), 16, **setting)
        assert _fingerprint(fast) == _fingerprint(general)
    # and the data are the neighbours' (world ranks, no split): west, east, south, north
    res = bsim.simulate(_array_halo(4, 4, 3, True), 16, **setting)
    for rank, got in enumerate(res.returns):
        i, j = rank % 4, rank // 4
        for side, (ok, peer) in enumerate([(i > 0, rank - 1), (i < 3, rank + 1),
                                           (j > 0, rank - 4), (j < 3, rank + 4)]):
            sizes = sum(10 * (1 + (peer + it) % 3) for it in range(3))
            assert got[side] == (peer * sizes if ok else 0.0)


def test_on_an_intercommunicator_the_peers_are_the_remote_group() -> None:
    # the flattened path is for intracommunicators: an intercommunicator's rank r is the
    # remote group's, which the general path resolves
    def main() -> list[int]:
        world = MPI.COMM_WORLD
        rank = world.Get_rank()
        local = world.Split(rank % 2, rank)
        inter = local.Create_intercomm(0, world, 1 - rank % 2, tag=7)
        peer = local.Get_rank()    # pair i of one side with i of the other
        st = MPI.Status()
        r = inter.Irecv(bsim.Buffer(64), source=peer, tag=3)
        inter.Isend(bsim.Buffer(8 * (1 + rank)), dest=peer, tag=3).Wait()
        r.Wait(st)
        return [st.Get_source(), st.Get_count(MPI.BYTE)]

    res = bsim.simulate(main, 4)
    # world ranks 0, 2 (even side, local 0, 1) pair with 1, 3 (odd side, local 0, 1)
    assert res.returns == [[0, 16], [0, 8], [1, 32], [1, 24]]


def test_fast_path_is_taken_for_placeholders_and_arrays_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"isend": 0, "irecv": 0}
    isend, irecv = p2p._isend, p2p._irecv

    def counting_isend(*args: Any, **kw: Any) -> Any:
        calls["isend"] += 1
        return isend(*args, **kw)

    def counting_irecv(*args: Any, **kw: Any) -> Any:
        calls["irecv"] += 1
        return irecv(*args, **kw)

    monkeypatch.setattr(p2p, "_isend", counting_isend)
    monkeypatch.setattr(p2p, "_irecv", counting_irecv)
    # on a 2x2 grid half the neighbours are PROC_NULL: those calls take it too
    bsim.simulate(_halo(2, 2, 1, True), 4)
    assert calls == {"isend": 0, "irecv": 0}
    calls.update(isend=0, irecv=0)
    bsim.simulate(_halo(2, 2, 1, False), 4)
    assert calls == {"isend": 16, "irecv": 16}
    calls.update(isend=0, irecv=0)
    bsim.simulate(_array_halo(2, 2, 1, True), 4)   # numpy arrays take it too
    assert calls == {"isend": 0, "irecv": 0}
    calls.update(isend=0, irecv=0)
    bsim.simulate(_array_halo(2, 2, 1, False), 4)   # [array, datatype] specs do not
    assert calls == {"isend": 16, "irecv": 16}
    calls.update(isend=0, irecv=0)
    bsim.simulate(_pipeline(3, True), 4)   # blocking Send and Recv take it too
    assert calls == {"isend": 0, "irecv": 0}
    bsim.simulate(_pipeline(3, False), 4)
    assert calls == {"isend": 9, "irecv": 9}
    calls.update(isend=0, irecv=0)
    bsim.simulate(_sendrecv_halo(2, 2, 1, True), 4)   # Sendrecv, its PROC_NULL parts too
    assert calls == {"isend": 0, "irecv": 0}


def _one_call(call: str, **kw: Any) -> None:
    def main() -> None:
        comm = MPI.COMM_WORLD
        if call == "Isend":
            comm.Isend(bsim.Buffer(8), **kw).Wait()
        elif call == "Irecv":
            comm.Irecv(bsim.Buffer(8), **kw).Wait()
        elif call == "Send":
            comm.Send(bsim.Buffer(8), **kw)
        elif call == "Sendrecv":
            comm.Sendrecv(bsim.Buffer(8), recvbuf=bsim.Buffer(8), **kw)
        else:
            comm.Recv(bsim.Buffer(8), **kw)
    bsim.simulate(main, 2)


@pytest.mark.parametrize("call, kw, why", [
    ("Isend", dict(dest=2), "invalid dest 2"),
    ("Isend", dict(dest=-3), "invalid dest -3"),
    ("Isend", dict(dest=1, tag=-1), "invalid tag -1"),
    ("Isend", dict(dest=1, tag=TAG_UB + 1), "invalid tag"),
    ("Irecv", dict(source=2), "invalid source 2"),
    ("Irecv", dict(source=0, tag=-2), "invalid tag -2"),
    ("Send", dict(dest=5), "invalid dest 5"),
    ("Recv", dict(source=3, tag=1), "invalid source 3"),
    ("Sendrecv", dict(dest=2, source=0), "invalid dest 2"),
    ("Sendrecv", dict(dest=0, source=4), "invalid source 4"),
    ("Sendrecv", dict(dest=0, sendtag=-5, source=0), "invalid tag -5"),
    # beyond a C int (the fast path compares ranks as C integers): no OverflowError
    ("Isend", dict(dest=2**31), f"invalid dest {2**31}"),
    ("Recv", dict(source=2**70, tag=1), f"invalid source {2**70}"),
    # beyond a C long long, either side (PyLong_AsLongLong's -1 there would be PROC_NULL)
    ("Isend", dict(dest=2**63), f"invalid dest {2**63}"),
    ("Isend", dict(dest=-2**63 - 1), f"invalid dest {-2**63 - 1}"),
    ("Irecv", dict(source=2**63 - 1), f"invalid source {2**63 - 1}"),
    ("Isend", dict(dest=1, tag=2**64 - 1), "invalid tag"),
    ("Irecv", dict(source=0, tag=-2**70), "invalid tag"),
])
def test_bad_arguments_still_reach_the_general_checks(call: str, kw: dict[str, Any],
                                                      why: str) -> None:
    with pytest.raises(MPIUsageError, match=f"rank 0: {call}.*{why}"):
        _one_call(call, **kw)


def test_numpy_ranks_take_the_general_path_and_proc_null_completes_at_once() -> None:
    def main() -> list[Any]:
        comm = MPI.COMM_WORLD
        rank = comm.Get_rank()
        peer = np.int64(1 - rank)
        st = MPI.Status()
        reqs = [comm.Irecv(bsim.Buffer(16), source=peer, tag=np.int32(5)),
                comm.Isend(bsim.Buffer(16), dest=peer, tag=np.int32(5)),
                comm.Irecv(bsim.Buffer(16), source=MPI.PROC_NULL),
                comm.Isend(bsim.Buffer(16), dest=MPI.PROC_NULL)]
        MPI.Request.Waitall(reqs)
        r = comm.Irecv(bsim.Buffer(16), source=MPI.PROC_NULL)
        r.Wait(st)
        return [st.Get_source(), st.Get_count(MPI.BYTE)]

    res = bsim.simulate(main, 2)
    assert res.returns == [[MPI.PROC_NULL, 0]] * 2
    assert res.messages.tolist() == [1, 1]
    assert res.bytes.tolist() == [16, 16]


def test_a_receive_from_proc_null_fills_the_status_as_mpi_says() -> None:
    # the MPI standard (Sec. 3.11): source PROC_NULL, tag ANY_TAG, count 0, whatever the
    # status held before; a placeholder and an array alike, blocking or not
    def main() -> list[int]:
        comm = MPI.COMM_WORLD
        other = 1 - comm.Get_rank()
        st = MPI.Status()
        got = []
        comm.Sendrecv(bsim.Buffer(24), dest=other, sendtag=7, recvbuf=bsim.Buffer(24),
                      source=other, recvtag=7, status=st)
        got += [st.Get_source(), st.Get_tag(), st.Get_count(MPI.BYTE)]
        comm.Irecv(bsim.Buffer(16), source=MPI.PROC_NULL, tag=3).Wait(st)
        got += [st.Get_source(), st.Get_tag(), st.Get_count(MPI.BYTE)]
        comm.Sendrecv(bsim.Buffer(24), dest=other, sendtag=7, recvbuf=bsim.Buffer(24),
                      source=other, recvtag=7, status=st)
        comm.Recv(np.zeros(2), source=MPI.PROC_NULL, tag=3, status=st)
        got += [st.Get_source(), st.Get_tag(), st.Get_count(MPI.BYTE)]
        return got

    res = bsim.simulate(main, 2)
    null = [MPI.PROC_NULL, MPI.ANY_TAG, 0]
    assert res.returns == [[1, 7, 24] + null + null, [0, 7, 24] + null + null]


@pytest.mark.parametrize("call", ["Isend", "Irecv", "Send", "Recv"])
def test_a_freed_sub_communicator_refuses_as_the_general_path(call: str) -> None:
    # flat_call reads a sub-communicator's kind, group and freed handles (compiled, as C
    # fields of CommIdentity): after this rank's Free the call goes to the general path,
    # which names the Free (MPI 4.1 Sec. 7.4.4: the handle is COMM_NULL)
    def main() -> None:
        sub = MPI.COMM_WORLD.Split(0, key=MPI.COMM_WORLD.Get_rank())
        sub.Free()
        if call == "Isend":
            sub.Isend(bsim.Buffer(8), dest=1, tag=0)
        elif call == "Irecv":
            sub.Irecv(bsim.Buffer(8), source=1, tag=0)
        elif call == "Send":
            sub.Send(bsim.Buffer(8), dest=1, tag=0)
        else:
            sub.Recv(bsim.Buffer(8), source=1, tag=0)
    with pytest.raises(MPIUsageError, match=f"rank 0: {call}.*after its Free"):
        bsim.simulate(main, 2)


def test_a_sub_communicator_member_sends_by_its_rank_there() -> None:
    # on a Split in reverse order the fast path maps the peer through the group it reads
    # in C: rank r of sub is world rank 2 - r, and the source reported is sub's rank
    def main() -> list[int]:
        world = MPI.COMM_WORLD
        sub = world.Split(0, key=-world.Get_rank())
        st = MPI.Status()
        if sub.Get_rank() == 0:
            sub.Isend(bsim.Buffer(40), dest=2, tag=9).Wait()
            return [world.Get_rank()]
        if sub.Get_rank() == 2:
            sub.Recv(bsim.Buffer(40), source=0, tag=9, status=st)
            return [world.Get_rank(), st.Get_source(), st.Get_count(MPI.BYTE)]
        return [world.Get_rank()]

    res = bsim.simulate(main, 3)
    assert res.returns == [[0, 0, 40], [1], [2]]
    assert res.messages.tolist() == [0, 0, 1]


def test_after_finalize_the_fast_path_raises_as_the_general_one() -> None:
    def main() -> None:
        MPI.Finalize()
        MPI.COMM_WORLD.Isend(bsim.Buffer(8), dest=0)

    with pytest.raises(MPIUsageError, match="rank 0: MPI call after MPI.Finalize"):
        bsim.simulate(main, 1)


@pytest.mark.parametrize("call, refused", [
    ("Waitall", True), ("waitall", True), ("Testall", True), ("Waitsome", True),
    ("testsome", True), ("Testany", False), ("Waitany", False)])
def test_a_request_listed_twice(call: str, refused: bool) -> None:
    # MPI allows each active request once in a list completed together; counting it twice
    # would wait for a second completion that never comes (a deadlock) or charge its cost
    # twice.  Testany and Waitany complete one request: a repeat is harmless there.
    def main() -> None:
        comm = MPI.COMM_WORLD
        peer = 1 - comm.Get_rank()
        r = comm.Irecv(bsim.Buffer(8), source=peer)
        s = comm.Isend(bsim.Buffer(8), dest=peer)
        getattr(MPI.Request, call)([r, s, r, MPI.REQUEST_NULL])
        MPI.Request.Waitall([r, s])

    if refused:
        with pytest.raises(MPIUsageError, match=f"(?i)rank 0: {call}: a request appears twice"):
            bsim.simulate(main, 2)
    else:
        assert bsim.simulate(main, 2).elapsed > 0
