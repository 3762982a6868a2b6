"""The mpi4py point-to-point surface: values, buffers, statuses, requests, probes."""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"


def run(main, n=2, **kw):
    kw.setdefault("protocol", "bsim")   # the papers' rules, priced by hand
    return bsim.simulate(main, ranks=n, network=NET, **kw)


def test_lowercase_objects_arrive_as_copies():
    """send/recv carry any picklable object; the receiver gets an equal, separate copy."""
    payload = {"a": [1, 2, 3], "b": "text"}

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.send(payload, dest=1, tag=3)
        else:
            return comm.recv(source=0, tag=3)

    got = run(main).returns[1]
    assert got == payload and got is not payload


def test_numpy_buffers_are_copied_and_status_is_filled():
    """Send/Recv with real arrays move the data; Status gives source, tag and count."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(np.arange(10, dtype="f8"), dest=1, tag=4)
        else:
            buf = np.zeros(10)
            st = MPI.Status()
            comm.Recv([buf, MPI.DOUBLE], source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
            return buf.tolist(), st.Get_source(), st.Get_tag(), st.Get_count(MPI.DOUBLE), st.count

    values, src, tag, count, nbytes = run(main).returns[1]
    assert values == list(map(float, range(10)))
    assert (src, tag, count, nbytes) == (0, 4, 10, 80)


@pytest.mark.parametrize("spec,nbytes", [
    (lambda: bsim.Buffer(100), 100),
    (lambda: bsim.Buffer(5, MPI.DOUBLE), 40),
    (lambda: [None, 7, MPI.INT], 28),
    (lambda: [None, 3, "d"], 24),
    (lambda: [np.zeros(10), 4, MPI.DOUBLE], 32),
    (lambda: [np.zeros(10, "i4"), MPI.INT], 40),
    (lambda: bytearray(13), 13),
])
def test_message_size_comes_from_the_buffer_spec(spec, nbytes):
    """Every BufSpec form reduces to count * datatype size (or the buffer's bytes)."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(spec(), dest=1)
        else:
            st = MPI.Status()
            comm.Recv(bsim.Buffer(1 << 20), source=0, status=st)
            return st.Get_count()

    res = run(main)
    assert res.returns[1] == nbytes
    assert res.bytes.tolist() == [nbytes, 0]
    assert res.finish[1] == 1e-6 + nbytes / 1e9


def test_proc_null_is_a_no_op():
    """Send to PROC_NULL does nothing; recv from PROC_NULL returns None at once."""
    def main():
        comm = MPI.COMM_WORLD
        comm.send("x", dest=MPI.PROC_NULL)
        st = MPI.Status()
        got = comm.recv(None, MPI.PROC_NULL, 0, status=st)
        comm.Recv(bsim.Buffer(8), source=MPI.PROC_NULL)
        return got, st.source, MPI.Wtime()

    assert run(main, n=1).returns == [(None, MPI.PROC_NULL, 0.0)]


def test_isend_request_is_truthy_until_complete():
    """A Request is truthy while pending and falsy after wait (mpi4py semantics)."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            req = comm.isend(1, dest=1)
            before = bool(req)
            req.wait()
            return before, bool(req), bool(MPI.REQUEST_NULL)
        comm.recv(source=0)

    assert run(main).returns[0] == (True, False, False)


def test_irecv_wait_returns_the_object_and_test_polls():
    """irecv().wait() returns the object; test() is (False, None) before the send."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            bsim.add_time(1e-3)
            comm.send("late", dest=1)
        else:
            req = comm.irecv(source=0)
            flag, obj = req.test()
            return flag, obj, req.wait()

    assert run(main).returns[1] == (False, None, "late")


def test_test_loop_makes_progress():
    """A busy Test loop advances simulated time by poll_time and terminates."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            bsim.add_time(1e-5)
            comm.Send(bsim.Buffer(8), dest=1)
        else:
            req = comm.Irecv(bsim.Buffer(8), source=0)
            polls = 0
            while not req.Test():
                polls += 1
            return polls

    res = run(main)
    # docs/protocols.md: Test succeeds once the message is visible, at the send time plus
    # the lookahead (min_cost = the 1 us latency): 10 + 1 = 11 us; a failed Test charges
    # poll_time = 1 us of wait.  Tests at 0, 1, ..., 10 us fail (eleven 1e-6 steps sum to
    # 1.1000000000000001e-05 == 1e-5 + 1e-6 in binary, so the 12th Test, at 11 us,
    # succeeds); the message was there since 10 us, so the receive only pays its cost
    # c = 1 us + 8 B / 1 GB/s.
    c = 1e-6 + 8e-9
    assert res.returns[1] == 11
    assert res.wait[1] == pytest.approx(11 * 1e-6, rel=1e-12)
    assert res.comm[1] == pytest.approx(c, rel=1e-12)
    assert res.finish[1] == pytest.approx(11e-6 + c, rel=1e-12)


@pytest.mark.parametrize("poll_time", [0, -1e-6, float("nan"), float("inf")])
def test_a_poll_that_takes_no_time_is_refused(poll_time):
    """``poll_time=0`` let a ``while not req.Test()`` loop spin at one simulated time
    until killed (the livelock check never ran); it must be a positive time."""
    for proto in ("bsim", "loggp"):
        with pytest.raises(ValueError, match="poll_time must be seconds > 0"):
            bsim.simulate(lambda: None, 2, protocol=f"{proto}:poll_time={poll_time}")


def test_a_loop_waiting_for_wtime_to_move_is_an_error(monkeypatch):
    """Only add_time and MPI calls move a rank's clock: ``while Wtime() - t0 < 1`` never
    ends, so after WTIME_SPIN calls at one time Wtime raises, naming the rank and the
    user's line; a loop that charges time between its Wtime calls is not affected."""
    import bsim.MPI as bsim_mpi
    monkeypatch.setattr(bsim_mpi, "WTIME_SPIN", 1000)

    def spin():
        t0 = MPI.Wtime()
        while MPI.Wtime() - t0 < 1.0:
            pass

    def paced():
        t0 = MPI.Wtime()
        while MPI.Wtime() - t0 < 3000e-9:   # 3,000 calls, each 1 ns later
            bsim.add_time(1e-9)

    with pytest.raises(bsim.errors.MPIUsageError,
                       match=r"rank 0: MPI.Wtime\(\) returned 0.0 1,000 times in a row.*"
                             r"test_p2p_api.py:\d+"):
        bsim.simulate(spin, 2, protocol="bsim")
    assert bsim.simulate(paced, 2, protocol="bsim").elapsed >= 3000e-9

def test_waitany_returns_the_first_available():
    """Waitany picks the request whose message was sent first."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            reqs = [comm.irecv(source=1), comm.irecv(source=2)]
            idx, obj = MPI.Request.waitany(reqs)
            rest = reqs[1 - idx].wait()
            return idx, obj, rest
        bsim.add_time(2e-3 if comm.rank == 1 else 1e-3)
        comm.send(comm.rank, dest=0)

    assert run(main, n=3).returns[0] == (1, 2, 1)


def test_waitall_testall_and_lowercase_waitall():
    """waitall returns the objects in request order; Testall is False until all arrive."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            reqs = [comm.irecv(source=s) for s in (1, 2)]
            early = MPI.Request.Testall(reqs)
            return early, MPI.Request.waitall(reqs)
        comm.send(comm.rank * 10, dest=0)

    assert run(main, n=3).returns[0] == (False, [10, 20])


def test_probe_and_iprobe_see_the_envelope_without_receiving():
    """Probe blocks until a message is there and fills the status; recv then gets it."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            bsim.add_time(1e-4)
            comm.Send(bsim.Buffer(24), dest=1, tag=5)
        else:
            early = comm.Iprobe(source=0, tag=5)
            st = MPI.Status()
            comm.Probe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
            t_probe = MPI.Wtime()
            comm.Recv(bsim.Buffer(24), source=st.source, tag=st.tag)
            return early, st.source, st.tag, st.Get_count(), t_probe

    early, src, tag, count, t_probe = run(main).returns[1]
    assert (early, src, tag, count) == (False, 0, 5, 24)
    # the envelope is visible the lookahead (min_cost: the 1 us latency) after the send
    assert t_probe == 1e-4 + 1e-6


def test_sendrecv_exchanges_without_deadlock():
    """sendrecv in a ring: every rank gets its left neighbour's value."""
    def main():
        comm = MPI.COMM_WORLD
        r, n = comm.rank, comm.size
        return comm.sendrecv(r, dest=(r + 1) % n, source=(r - 1) % n)

    assert run(main, n=5).returns == [4, 0, 1, 2, 3]


def test_sendrecv_replace_swaps_arrays():
    """Sendrecv_replace swaps buffers between two ranks."""
    def main():
        comm = MPI.COMM_WORLD
        buf = np.full(4, comm.rank, dtype="i4")
        other = 1 - comm.rank
        comm.Sendrecv_replace(buf, dest=other, source=other)
        return buf.tolist()

    assert run(main).returns == [[1] * 4, [0] * 4]


def test_comm_self_and_world_identity():
    """COMM_SELF has size 1; Get_processor_name names a node; Wtime starts at 0."""
    def main():
        return (MPI.COMM_SELF.Get_size(), MPI.COMM_SELF.rank, MPI.COMM_WORLD.size,
                MPI.Wtime(), MPI.Get_processor_name())

    assert run(main, n=3).returns[2] == (1, 0, 3, 0.0, "node2")


def test_compute_dims_is_balanced():
    """Compute_dims factors like MPI_Dims_create."""
    assert MPI.Compute_dims(12, 2) == [4, 3]
    assert MPI.Compute_dims(64, 3) == [4, 4, 4]
    assert MPI.Compute_dims(6, [0, 3]) == [2, 3]
    assert MPI.Compute_dims(7, 2) == [7, 1]


def test_mpi_outside_a_simulation_raises_clearly():
    """Using COMM_WORLD outside a simulated rank names the fix."""
    with pytest.raises(bsim.NotInSimulationError, match="bsim.simulate"):
        MPI.COMM_WORLD.Get_rank()


def test_bottom_with_count_and_datatype_is_a_placeholder():
    """[MPI.BOTTOM, count, datatype] sends count * size bytes and moves no data."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send([MPI.BOTTOM, 5, MPI.INT], dest=1)
        else:
            st = MPI.Status()
            comm.Recv([MPI.BOTTOM, 5, MPI.INT], source=0, status=st)
            return st.Get_count(MPI.INT)

    assert run(main).returns[1] == 5

    def empty():   # [None, datatype] without a count is an empty message, as in mpi4py
        st = MPI.Status()
        MPI.COMM_WORLD.Sendrecv([None, MPI.INT], 0, 0, [None, MPI.INT], 0, 0, st)
        return st.Get_count(MPI.INT)
    assert run(empty, n=1).returns == [0]


def test_persistent_requests_restart_with_fresh_data_and_times():
    """Send_init/Recv_init started 3 times: each round trip costs 2 c, data read at Start."""
    s = 16

    def main():
        comm = MPI.COMM_WORLD
        other = 1 - comm.rank
        out = np.zeros(2, "i8")
        inp = np.zeros(2, "i8")
        reqs = [comm.Recv_init(inp, source=other, tag=3), comm.Send_init(out, dest=other, tag=3)]
        seen = []
        for it in range(3):
            out[:] = (comm.rank, it)
            MPI.Prequest.Startall(reqs)
            MPI.Request.Waitall(reqs)
            seen.append(inp.tolist())
        return seen, MPI.Wtime(), all(bool(r) for r in reqs)

    res = run(main)
    c = 1e-6 + s / 1e9        # 16-byte message on the test network
    for rank, (seen, t, alive) in enumerate(res.returns):
        assert seen == [[1 - rank, it] for it in range(3)]
        # both ranks send at t and receive the partner's message sent at t: + c per round
        assert t == pytest.approx(3 * c, rel=1e-12)
        assert alive          # persistent handles stay valid after completion


def test_starting_an_active_persistent_request_is_an_error():
    """Start on a request already started and not completed raises MPIUsageError."""
    def main():
        comm = MPI.COMM_WORLD
        req = comm.Recv_init(bsim.Buffer(8), source=0, tag=1)
        req.Start()
        req.Start()

    with pytest.raises(bsim.MPIUsageError, match="rank 0: Start: Recv_init is already active"):
        run(main, n=1)


def test_matched_probe_reserves_the_message_for_its_handle():
    """mprobe takes the message out of the queue: a later wildcard recv gets the next one."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.send("first", dest=1, tag=1)
            comm.send("second", dest=1, tag=1)
        else:
            st = MPI.Status()
            m = comm.mprobe(source=0, tag=1, status=st)
            other = comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG)
            return m.recv(), other, st.Get_source(), bool(m), comm.improbe(source=0) is None

    assert run(main).returns[1] == ("first", "second", 0, False, True)


def test_cancelled_receive_completes_and_reports_it():
    """Cancel on an unmatched Irecv: Wait returns at once with status.cancelled set."""
    def main():
        comm = MPI.COMM_WORLD
        req = comm.Irecv(bsim.Buffer(8), source=0, tag=99)
        req.Cancel()
        st = MPI.Status()
        req.Wait(st)
        return st.Is_cancelled(), MPI.Wtime()

    assert run(main, n=1).returns == [(True, 0.0)]


def _irecv_program(nbytes: int, buf, setup=None):
    """Rank 0 sends a bytes object whose pickle is *nbytes* long; rank 1 irecv(buf)s it."""
    import pickle

    payload = b"x" * nbytes
    payload = b"x" * (2 * nbytes - len(pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)))
    assert len(pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)) == nbytes

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.send(payload, dest=1, tag=1)
            return None
        if setup is not None:
            setup()
        got = comm.irecv(buf, source=0, tag=1).wait()
        return len(got)
    return main, len(payload)


@pytest.mark.parametrize("nbytes, buf", [(32768, None), (40000, 40000), (40000, "array")])
def test_irecv_holds_what_mpi4py_posts(nbytes, buf):
    """irecv() posts mpi4py.rc.irecv_bufsz = 32,768 bytes without a buffer, *n* bytes for
    irecv(n), a writable buffer's length (mpi4py's PyMPI_irecv): a pickle that fits arrives."""
    room = bytearray(nbytes) if buf == "array" else buf
    main, size = _irecv_program(nbytes, room)
    assert run(main).returns[1] == size
    if buf == "array":   # the pickle landed in the caller's buffer
        assert bytes(room[-8:]) != bytes(8)


@pytest.mark.parametrize("nbytes, buf", [(32769, None), (40000, 39999), (40000, "array")])
def test_irecv_of_a_larger_pickle_is_truncated(nbytes, buf):
    """One byte more than the buffer mpi4py posts: ERR_TRUNCATE at the wait (as MPICH
    reports for the same program under mpiexec), naming both sizes and the way out."""
    room = bytearray(nbytes - 1) if buf == "array" else buf
    main, _ = _irecv_program(nbytes, room)
    with pytest.raises(bsim.TruncationError,
                       match=rf"rank 1: irecv: message of {nbytes} bytes .* holds "
                             rf"{nbytes - 1} bytes .*irecv\(n\)"):
        run(main)


def test_irecv_bufsz_follows_mpi4py_rc(monkeypatch):
    """mpi4py.rc.irecv_bufsz, or MPI4PY_RC_IRECV_BUFSZ, sets irecv()'s default buffer."""
    def raise_rc():
        import mpi4py
        mpi4py.rc.irecv_bufsz = 50000

    main, size = _irecv_program(40000, None, setup=raise_rc)
    assert run(main).returns[1] == size
    main, size = _irecv_program(40000, None)
    with pytest.raises(bsim.TruncationError):
        run(main)
    monkeypatch.setenv("MPI4PY_RC_IRECV_BUFSZ", "40000")
    assert run(main).returns[1] == size
