# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
world_group = comm.Get_group()
even = world_group.Incl([r for r in range(comm.size) if r % 2 == 0])
even_comm = comm.Create(even)
if even_comm != MPI.COMM_NULL:
    print(rank, "in even comm as", even_comm.Get_rank(), "sum", even_comm.allreduce(rank))
    even_comm.Free()
else:
    print(rank, "not in even comm")
print(rank, "translate", MPI.Group.Translate_ranks(even, [0, 1], world_group))
