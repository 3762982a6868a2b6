"""A receive's status envelope: (source, tag, count) of the message that matched it.

The matched message itself is kept in the request (``RequestState.raw_envelope``), its
envelope read from it when a status asks (``RequestState.envelope``), so no tuple is made
at every match; a completed request lets the message go, so a program that keeps its
requests does not keep their messages' data.  Expected values by hand: MPI 4.1 Sec. 3.2.5
(the source as a rank of the receive's communicator, the count in elements received).
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"


def test_statuses_name_the_source_in_the_communicator_tag_and_count() -> None:
    def main() -> list[Any]:
        world = MPI.COMM_WORLD
        rank = world.Get_rank()
        odd = world.Split(rank % 2, key=-rank)   # reversed: world 3 is rank 0 of the odds
        out: list[Any] = []
        if rank == 1:
            st = MPI.Status()
            r1 = odd.Irecv(np.zeros(8), source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG)
            r2 = odd.Irecv(bsim.Buffer(1000), source=0, tag=MPI.ANY_TAG)
            odd.Barrier()   # both sent: visible once the barrier ends
            while not r1.Get_status(st):   # before completion: the status is readable
                pass
            out.append([st.Get_source(), st.Get_tag(), st.Get_count(MPI.DOUBLE)])
            sts = [MPI.Status(), MPI.Status()]
            MPI.Request.Waitall([r1, r2], sts)
            out += [[s.Get_source(), s.Get_tag(), s.Get_count(MPI.BYTE)] for s in sts]
            r1.Get_status(st)   # completed: inactive, an empty status (MPI 4.1 Sec. 3.7.3)
            out.append([st.Get_source(), st.Get_tag(), st.Get_count(MPI.BYTE)])
        elif rank == 3:
            odd.Send(np.arange(5.0), dest=1, tag=11)
            odd.Send(bsim.Buffer(640), dest=1, tag=12)
            odd.Barrier()
        return out

    res = bsim.simulate(main, 4, network=NET)
    # world 3 is rank 0 of the odd ranks (key -3 before -1), world 1 is its rank 1
    assert res.returns[1] == [[0, 11, 5], [0, 11, 40], [0, 12, 640],
                              [MPI.ANY_SOURCE, MPI.ANY_TAG, 0]]


def test_a_truncated_receive_counts_what_its_buffer_took() -> None:
    def main() -> list[Any]:
        comm = MPI.COMM_WORLD
        if comm.Get_rank() == 0:
            comm.Send(bsim.Buffer(100), dest=1, tag=3)
            return []
        st = MPI.Status()
        try:
            comm.Recv(bsim.Buffer(60), source=0, tag=3, status=st)
        except MPI.Exception as exc:
            return [exc.Get_error_class() == MPI.ERR_TRUNCATE, st.Get_source(),
                    st.Get_tag(), st.Get_count(MPI.BYTE)]
        return ["not truncated"]

    res = bsim.simulate(main, 2, network=NET)
    assert res.returns[1] == [True, 0, 3, 60]


def test_completed_requests_do_not_keep_their_messages_data() -> None:
    n, size = 64, 1 << 20   # 64 receives of 1 MiB each, their requests all kept

    def main() -> int:
        comm = MPI.COMM_WORLD
        rank = comm.Get_rank()
        kept = []
        data = np.ones(size // 8)
        into = np.zeros(size // 8)
        ack = bsim.Buffer(8)
        for k in range(n):   # one message at a time (a sender lists its messages in
            if rank == 0:    # flight until its next send after they arrived)
                comm.Send(data, dest=1, tag=k)
                comm.Recv(ack, source=1)
            else:
                r = comm.Irecv(into, source=0, tag=k)
                r.Wait()
                kept.append(r)
                comm.Send(ack, dest=0)
        comm.Barrier()   # every message received
        held, _ = tracemalloc.get_traced_memory()   # while rank 1 keeps its requests
        return held

    tracemalloc.start()
    try:
        res = bsim.simulate(main, 2, network=NET)
    finally:
        tracemalloc.stop()
    # had each kept request kept its message, its 64 MiB of payloads would be held
    assert res.returns[1] < 16 * size
