"""Golden: wildcard receives, Probe/Iprobe, Mprobe and a Test polling loop (4 ranks)."""

import numpy as np
from mpi4py import MPI

import bsim

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
if rank == 0:
    got = []
    for _ in range(size - 1):
        status = MPI.Status()
        comm.Probe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
        buf = np.zeros(status.Get_count(MPI.BYTE), dtype="B")
        comm.Recv([buf, MPI.BYTE], source=status.Get_source(), tag=status.Get_tag())
        got.append(status.Get_source())
    msg = comm.mprobe(source=MPI.ANY_SOURCE, tag=5)
    got.append(msg.recv())
    req = comm.irecv(source=MPI.ANY_SOURCE, tag=6)
    polls = 0
    while True:
        done, value = req.test()
        if done:
            break
        polls += 1
        bsim.add_time(2e-6)
    got.append((value, polls))
    flag = comm.Iprobe(source=MPI.ANY_SOURCE, tag=99)
    got.append(flag)
    print(got)
else:
    bsim.add_time(1e-5 * (size - rank))
    comm.Send([np.zeros(1000 * rank, dtype="B"), MPI.BYTE], dest=0, tag=rank)
    if rank == 1:
        bsim.add_time(3e-5)
        comm.send("mprobe", dest=0, tag=5)
    if rank == 2:
        bsim.add_time(7e-5)
        comm.send(42, dest=0, tag=6)
