# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.rank
color = rank % 2
local = comm.Split(color, rank)
remote_leader = 1 if color == 0 else 0
inter = local.Create_intercomm(0, comm, remote_leader, tag=12)
print(rank, "local", local.rank, "remote size", inter.Get_remote_size())
if local.rank == 0:
    inter.send("hello from group %d" % color, dest=0)
    print(rank, inter.recv(source=0))
merged = inter.Merge(high=(color == 1))
print(rank, "merged rank", merged.rank)
