# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
WORK, STOP = 1, 2

if rank == 0:
    tasks = list(range(1, 13))
    results = {}
    active = 0
    for w in range(1, size):
        if tasks:
            comm.send(tasks.pop(0), dest=w, tag=WORK)
            active += 1
    st = MPI.Status()
    while active:
        task, res = comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
        results[task] = res
        active -= 1
        if tasks:
            comm.send(tasks.pop(0), dest=st.source, tag=WORK)
            active += 1
    for w in range(1, size):
        comm.send(None, dest=w, tag=STOP)
    print(sorted(results.items()))
else:
    st = MPI.Status()
    while True:
        task = comm.recv(source=0, tag=MPI.ANY_TAG, status=st)
        if st.tag == STOP:
            break
        comm.send((task, task ** 3 - 1), dest=0, tag=WORK)
