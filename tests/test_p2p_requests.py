"""Synchronous sends, Isendrecv, the *some* request calls, statuses of null requests.

The program below runs under real ``mpiexec`` and under bsim (both protocols) and
must return the same values: what an MPI program can observe of these calls.
Timing checks are hand-derived from the rules in ``docs/protocols.md``.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import needs_mpiexec, real_mpi_returns

import bsim
from bsim.errors import MPIUsageError

PROGRAM = '''
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    right, left = (r + 1) % n, (r - 1) % n
    out = {}
    # Issend to oneself: not complete until the receive is posted
    req = comm.Issend([np.arange(3, dtype="i"), MPI.INT], r, 7)
    out["issend_before"] = bool(req.Test())
    status = MPI.Status()
    out["get_status_before"] = bool(req.Get_status(status))
    buf = np.zeros(3, "i")
    comm.Recv(buf, r, 7)
    flag = False
    while not flag:
        flag = req.Test()
    out["issend_after"] = [bool(flag), bool(req), buf.tolist()]
    # object form: issend, testsome finds nothing until the receive
    reqs = [comm.issend(i, r, i) for i in range(4)]
    idx, objs = MPI.Request.testsome(reqs)
    out["testsome_none"] = [idx, objs]
    got = comm.recv(source=r, tag=2)
    idx = []
    while not idx:
        idx, objs = MPI.Request.testsome(reqs)
    out["testsome_one"] = [idx, objs, got]
    for i in (0, 1, 3):
        comm.recv(source=r, tag=i)
    done = []
    while len(done) < 3:
        more, _ = MPI.Request.waitsome(reqs)
        done += more
    out["waitsome_rest"] = sorted(done)
    out["waitsome_none"] = list(MPI.Request.waitsome(reqs))
    # receives completed by waitsome, with a statuses list grown to the count
    rreqs = [comm.irecv(source=left, tag=10 + i) for i in range(3)]
    for i in (2, 0):
        comm.send(f"m{i}", right, 10 + i)
    comm.Barrier()
    statuses = []
    got = []
    while len(got) < 2:
        idx, objs = MPI.Request.waitsome(rreqs, statuses)
        got += list(zip(idx, objs, [s.tag for s in statuses]))
    comm.Barrier()
    comm.send("m1", right, 11)
    got += [MPI.Request.waitsome(rreqs)[1]]
    out["waitsome_recv"] = sorted(map(str, got))
    # Isendrecv and Isendrecv_replace around the ring
    sbuf = np.full(3, r, "i")
    rbuf = np.full(4, -1, "i")
    comm.Isendrecv(sbuf, right, 3, rbuf, left, 3).Wait()
    out["isendrecv"] = rbuf.tolist()
    rep = np.full(2, float(r))
    st = MPI.Status()
    comm.Isendrecv_replace(rep, right, 4, left, 4).Wait(st)
    out["isendrecv_replace"] = [rep.tolist(), st.Get_source()]
    # null requests: empty statuses, lists grown to one status per request
    st = MPI.Status()
    st.source, st.tag = 5, 5
    out["null_status"] = [MPI.REQUEST_NULL.Get_status(st), st.source == MPI.ANY_SOURCE,
                          st.tag == MPI.ANY_TAG, st.error == MPI.SUCCESS]
    sts = []
    MPI.Request.Waitall([MPI.REQUEST_NULL] * 3, sts)
    out["waitall_statuses"] = [len(sts), [s.source == MPI.ANY_SOURCE for s in sts]]
    out["get_status_any"] = list(MPI.Request.Get_status_any([MPI.REQUEST_NULL] * 2))
    # blocking Ssend in a ring: even ranks send first, odd ranks receive first
    if n % 2 == 0:
        b = np.zeros(1, "i")
        if r % 2 == 0:
            comm.Ssend(np.array([r], "i"), right, 9)
            comm.Recv(b, left, 9)
        else:
            comm.Recv(b, left, 9)
            comm.Ssend(np.array([r], "i"), right, 9)
        out["ssend_ring"] = int(b[0])
    return out
'''


def _bsim(nprocs: int, protocol: str = "bsim") -> list[Any]:
    namespace: dict[str, Any] = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], nprocs, protocol=protocol).returns


@needs_mpiexec
def test_same_values_as_real_mpi() -> None:
    real = real_mpi_returns(2, PROGRAM)
    assert _bsim(2) == real
    assert _bsim(2, "loggp") == real


@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
@pytest.mark.parametrize("nprocs", [1, 3])
def test_issend_waits_for_the_receive(nprocs: int, protocol: str) -> None:
    out = _bsim(nprocs, protocol)[0]
    assert out["issend_before"] is False and out["get_status_before"] is False
    assert out["issend_after"] == [True, False, [0, 1, 2]]
    assert out["testsome_none"] == [[], []]
    assert out["testsome_one"] == [[2], [None], 2]
    assert out["waitsome_rest"] == [0, 1, 3]
    assert out["waitsome_none"] == [None, None]


def test_ssend_timing_under_bsim() -> None:
    """Hand-derived: l = 1 us, 1 GB/s, receiver posts at 50 us.  The envelope reaches
    it at ts + l; the match is at max(ts + l, tp) = 50 us; the acknowledgement
    returns at 50 + 1 = 51 us.  The sender waited 50 us for the receiver (wait), then
    1 us for the acknowledgement (comm).  The receiver pays max(tp, ts) + cost."""
    def main() -> Any:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Ssend(bsim.Buffer(1000), dest=1)
        else:
            bsim.add_time(50e-6)
            comm.Recv(bsim.Buffer(1000), source=0)
        return MPI.Wtime()

    res = bsim.simulate(main, 2, network="hockney:latency=1e-6,bandwidth=1e9", protocol="bsim")
    assert res.returns[0] == pytest.approx(51e-6)
    assert res.returns[1] == pytest.approx(50e-6 + 2e-6)
    assert res.wait[0] == pytest.approx(50e-6)
    assert res.comm[0] == pytest.approx(1e-6)


def test_isendrecv_charges_as_irecv_isend_waitall() -> None:
    """One joined request costs what Waitall on the two parts costs."""
    def joined() -> Any:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        r, n = comm.rank, comm.size
        bsim.add_time(r * 3e-6)
        comm.Isendrecv(bsim.Buffer(4000), (r + 1) % n, 0, bsim.Buffer(4000),
                       (r - 1) % n, 0).Wait()
        return MPI.Wtime()

    def parts() -> Any:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        r, n = comm.rank, comm.size
        bsim.add_time(r * 3e-6)
        rr = comm.Irecv(bsim.Buffer(4000), (r - 1) % n, 0)
        sr = comm.Isend(bsim.Buffer(4000), (r + 1) % n, 0)
        MPI.Request.Waitall([sr, rr])
        return MPI.Wtime()

    for protocol in ("bsim", "loggp", "loggp:eager_limit=1000"):
        a = bsim.simulate(joined, 4, protocol=protocol)
        b = bsim.simulate(parts, 4, protocol=protocol)
        assert a.returns == pytest.approx(b.returns), protocol
        assert list(a.finish) == pytest.approx(list(b.finish)), protocol


BSEND_PROGRAM = '''
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    right, left = (r + 1) % n, (r - 1) % n
    out = {}
    mem = MPI.Alloc_mem(2 * (40 + MPI.BSEND_OVERHEAD))
    MPI.Attach_buffer(mem)
    comm.Ibsend(np.full(10, r, "i"), right, 1).Wait()
    comm.Bsend(np.full(10, r + 10, "i"), right, 2)
    a, b = np.zeros(10, "i"), np.zeros(10, "i")
    comm.Recv(b, left, 2)
    comm.Recv(a, left, 1)
    out["bsend"] = [a.tolist(), b.tolist()]
    MPI.Flush_buffer()
    MPI.Iflush_buffer().Wait()
    out["detach_same"] = MPI.Detach_buffer().nbytes == mem.nbytes
    out["detach_none"] = MPI.Detach_buffer().nbytes
    MPI.Attach_buffer(MPI.BUFFER_AUTOMATIC)
    comm.bsend({"from": r}, right, 3)
    out["bsend_obj"] = comm.recv(source=left, tag=3)
    out["automatic"] = MPI.Detach_buffer() == MPI.BUFFER_AUTOMATIC
    c = comm.Dup()
    c.Attach_buffer(MPI.Alloc_mem(100 + MPI.BSEND_OVERHEAD))
    req = c.Bsend_init(np.full(25, r, "i"), right, 4)
    got = np.zeros(25, "i")
    for _ in range(2):
        req.Start()
        req.Wait()
        c.Recv(got, left, 4)
        c.Flush_buffer()
    req.Free()
    out["bsend_init"] = int(got.sum())
    c.Detach_buffer()
    c.Free()
    return out
'''


def _bsim_program(code: str, nprocs: int, protocol: str = "bsim") -> list[Any]:
    namespace: dict[str, Any] = {}
    exec(compile(code, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], nprocs, protocol=protocol).returns


@needs_mpiexec
def test_buffered_sends_as_real_mpi() -> None:
    real = real_mpi_returns(2, BSEND_PROGRAM)
    assert _bsim_program(BSEND_PROGRAM, 2) == real
    assert _bsim_program(BSEND_PROGRAM, 2, "loggp:eager_limit=16") == real


def test_buffered_send_rules() -> None:
    """No buffer, too small a buffer, attaching twice: one clear error each."""
    def main(case: str) -> Any:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        if case != "none":
            MPI.Attach_buffer(bytearray(50 + MPI.BSEND_OVERHEAD))
        if case == "twice":
            MPI.Attach_buffer(bytearray(10))
        comm.Bsend(bsim.Buffer(60), dest=0)

    for case, match in (("none", "no buffer is attached"),
                        ("small", r"needs 156 bytes \(60 \+ BSEND_OVERHEAD 96\), 146 of 146"),
                        ("twice", "already attached")):
        with pytest.raises(MPIUsageError, match=match):
            bsim.simulate(lambda c=case: main(c), 1, protocol="bsim")


def test_detach_waits_for_rendezvous_buffered_messages() -> None:
    """loggp, eager limit 16 bytes: a 1000-byte buffered message leaves the buffer once
    the receiver (posting at 100 us) has cleared it; Detach_buffer waits for that."""
    def main() -> Any:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            MPI.Attach_buffer(bytearray(1000 + MPI.BSEND_OVERHEAD))
            comm.Bsend(bsim.Buffer(1000), dest=1)
            t_bsend = MPI.Wtime()
            MPI.Detach_buffer()
            return [t_bsend, MPI.Wtime()]
        bsim.add_time(100e-6)
        comm.Recv(bsim.Buffer(1000), source=0)
        return MPI.Wtime()

    res = bsim.simulate(main, 2, network="loggp:L=1e-6,o=0,g=0,G=1e-9",
                        protocol="loggp:eager_limit=16")
    t_bsend, t_detach = res.returns[0]
    assert t_bsend == 0.0
    assert t_detach == pytest.approx(100e-6 + 1e-6 + 999e-9)   # CTS, then injection


PARTITIONED_PROGRAM = '''
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    right, left = (r + 1) % n, (r - 1) % n
    out = {}
    p = 3
    sbuf = np.arange(6, dtype="d") + 10 * r
    rbuf = np.full(6, -1.0)
    sreq = comm.Psend_init(sbuf, p, right, 5)
    rreq = comm.Precv_init(rbuf, p, left, 5)
    arrived = []
    for rnd in range(2):
        comm.Barrier()
        rreq.Start()
        before = [bool(rreq.Parrived(i)) for i in range(p)]
        comm.Barrier()
        sreq.Start()
        if rnd == 0:
            sreq.Pready_list([2, 0])
            sreq.Pready(1)
        else:
            sreq.Pready_range(0, p - 1)
        for i in range(p):
            while not rreq.Parrived(i):
                pass
        rreq.Wait()
        sreq.Wait()
        arrived.append([before, rbuf.tolist()])
        sbuf += 100
    out["rounds"] = arrived
    out["active"] = [bool(sreq), bool(rreq)]
    sreq.Free()
    rreq.Free()
    out["freed"] = [sreq == MPI.REQUEST_NULL, rreq == MPI.REQUEST_NULL]
    return out
'''


@needs_mpiexec
def test_partitioned_as_real_mpi() -> None:
    real = real_mpi_returns(2, PARTITIONED_PROGRAM)
    assert _bsim_program(PARTITIONED_PROGRAM, 2) == real
    assert _bsim_program(PARTITIONED_PROGRAM, 2, "loggp") == real
    assert _bsim_program(PARTITIONED_PROGRAM, 3)[1]["rounds"][1][1] == \
        [100.0, 101.0, 102.0, 103.0, 104.0, 105.0]


def test_partitioned_timing() -> None:
    """Each part is one message of nbytes/partitions: 2 parts of 500 bytes, c = 1 us +
    0.5 us.  Part 0 is sent at 0, part 1 at 10 us; a receiver waiting from 0 handles
    part 0 (0 -> c), then part 1 from 10 us: it ends at 10 us + c = 11.5 us."""
    def main() -> Any:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        buf = bsim.Buffer(1000)
        if comm.rank == 0:
            req = comm.Psend_init(buf, 2, 1, 0)
            req.Start()
            req.Pready(0)
            bsim.add_time(10e-6)
            req.Pready(1)
        else:
            req = comm.Precv_init(buf, 2, 0, 0)
            req.Start()
        req.Wait()
        return MPI.Wtime()

    res = bsim.simulate(main, 2, network="hockney:latency=1e-6,bandwidth=1e9", protocol="bsim")
    assert res.returns == pytest.approx([10e-6, 11.5e-6])


def test_partitioned_errors() -> None:
    def main(case: str) -> None:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        if case == "wildcard":
            comm.Precv_init(bytearray(4), 2, MPI.ANY_SOURCE, 0)
        req = comm.Psend_init(bytearray(4), 2, 0, 0)
        if case == "inactive":
            req.Pready(0)
        req.Start()
        req.Pready(2)

    for case, match in (("wildcard", "no wildcards"), ("inactive", "not active"),
                        ("range", r"invalid partition \(valid: 0..1\)")):
        with pytest.raises(MPIUsageError, match=match):
            bsim.simulate(lambda c=case: main(c), 1, protocol="bsim")


def test_status_memory_and_constructor() -> None:
    """mpi4py's Status(status) takes only a Status; tomemory() reads and writes through."""
    st = bsim.MPI.Status()
    st.source, st.tag, st.error = 11, 22, 33
    mem = st.tomemory()
    seq = list(mem)
    mem[seq.index(11)] = 111
    mem[seq.index(22)] = 222
    assert (st.source, st.tag, st.error) == (111, 222, 33)
    with pytest.raises(TypeError):
        bsim.MPI.Status(123)


def test_waitany_on_no_active_request_empties_the_status():
    """MPI: Waitany with every request null or inactive returns UNDEFINED and an empty
    status (source ANY_SOURCE, tag ANY_TAG); the status kept the last message's."""
    from bsim import MPI

    def main():
        comm = MPI.COMM_WORLD
        st = MPI.Status()
        if comm.rank == 0:
            comm.Send(bsim.Buffer(8), dest=1, tag=5)
            return None
        reqs = [MPI.REQUEST_NULL, comm.Irecv(bsim.Buffer(8), source=0, tag=5)]
        assert MPI.Request.Waitany(reqs, st) == 1 and (st.source, st.tag) == (0, 5)
        idx = MPI.Request.Waitany(reqs, st)
        return idx, st.source, st.tag

    res = bsim.simulate(main, ranks=2, protocol="bsim")
    assert res.returns[1] == (MPI.UNDEFINED, MPI.ANY_SOURCE, MPI.ANY_TAG)


_SHARED: dict[str, Any] = {}


def _wait_on_anothers_request(call: str) -> None:
    comm = bsim.MPI.COMM_WORLD
    buf = bsim.Buffer(8)
    if comm.Get_rank() == 1:
        _SHARED["req"] = comm.Irecv(buf, source=0)
        comm.Barrier()
        comm.Send(buf, dest=0)
    else:
        comm.Barrier()
        req = _SHARED["req"]
        if call == "Waitall":
            bsim.MPI.Request.Waitall([req])   # line of the call the report must name
        else:
            req.Wait()


@pytest.mark.parametrize("call", ["Waitall", "Wait"])
def test_waiting_on_another_ranks_request_is_one_clear_error(call: str) -> None:
    """A request belongs to the rank that posted it: another rank's wait on it names both
    ranks, the call and the caller's line (compiled, the owner check is a C function)."""
    with pytest.raises(MPIUsageError) as info:
        bsim.simulate(_wait_on_anothers_request, ranks=2, check_memory=False,
                      kwargs={"call": call})
    text = str(info.value)
    assert text.startswith(f"rank 0: {call}: request ") and "belongs to rank 1" in text
    assert f"{__file__}:" in text
