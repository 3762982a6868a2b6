"""Master-worker task farm: ANY_SOURCE/ANY_TAG, Probe/Iprobe, Get_count, stop tag."""
from mpi4py import MPI
import numpy as np

WORK, STOP, RESULT = 1, 2, 3


def master(comm, ntasks):
    size = comm.Get_size()
    status = MPI.Status()
    results = {}
    sent = 0
    for w in range(1, size):
        if sent < ntasks:
            comm.send(sent, dest=w, tag=WORK)
            sent += 1
        else:
            comm.send(None, dest=w, tag=STOP)
    active = min(size - 1, ntasks)
    while active:
        comm.Probe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
        src = status.Get_source()
        n = status.Get_count(MPI.DOUBLE)
        buf = np.empty(n)
        comm.Recv([buf, MPI.DOUBLE], source=src, tag=RESULT)
        results[int(buf[0])] = buf[1:].tolist()
        if sent < ntasks:
            comm.send(sent, dest=src, tag=WORK)
            sent += 1
        else:
            comm.send(None, dest=src, tag=STOP)
            active -= 1
    return results


def worker(comm):
    status = MPI.Status()
    done = 0
    while True:
        task = comm.recv(source=0, tag=MPI.ANY_TAG, status=status)
        if status.Get_tag() == STOP:
            break
        out = np.array([task] + [task * k for k in range(task % 3 + 1)], dtype=float)
        comm.Send(out, dest=0, tag=RESULT)
        done += 1
    return done


def main():
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    if comm.Get_size() == 1:
        print("rank 0 needs workers")
        return
    if rank == 0:
        res = master(comm, 10)
        for k in sorted(res):
            print("task", k, res[k])
    else:
        d = worker(comm)
    total = comm.reduce(0 if rank == 0 else d, root=0)
    if rank == 0:
        print("tasks done", total)

    # Iprobe polling loop
    if rank != 0:
        comm.send(rank * 2, dest=0, tag=7)
    else:
        got = []
        st = MPI.Status()
        while len(got) < comm.Get_size() - 1:
            if comm.Iprobe(source=MPI.ANY_SOURCE, tag=7, status=st):
                got.append(comm.recv(source=st.source, tag=7))
        print("iprobe got", sorted(got))
    flag = comm.iprobe(source=MPI.ANY_SOURCE, tag=99)
    print(f"rank {rank} nothing pending {flag}")


if __name__ == "__main__":
    main()
