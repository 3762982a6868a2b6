"""Split_type(COMM_TYPE_SHARED) node communicator, node leaders, groups."""
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=rank)
nrank, nsize = node.Get_rank(), node.Get_size()
leaders = comm.Split(0 if nrank == 0 else MPI.UNDEFINED, key=rank)
if leaders != MPI.COMM_NULL:
    nleaders = leaders.Get_size()
    leaders.Free()
else:
    nleaders = None
total_nodes = comm.allreduce(1 if nrank == 0 else 0)
print(f"rank {rank} nodes counted {total_nodes} total ranks in nodes {comm.allreduce(1 if nrank == 0 else 0, op=MPI.SUM) and comm.allreduce(nsize if nrank == 0 else 0)}")
grp = comm.Get_group()
evens = grp.Incl(list(range(0, size, 2)))
ec = comm.Create(evens)
if ec != MPI.COMM_NULL:
    print(f"rank {rank} even comm rank {ec.Get_rank()} of {ec.Get_size()}")
    ec.Free()
else:
    print(f"rank {rank} not in evens")
tr = MPI.Group.Translate_ranks(evens, list(range(evens.Get_size())), grp)
print(f"rank {rank} translate {tr} evens rank {evens.Get_rank() == MPI.UNDEFINED}")
evens.Free()
grp.Free()
node.Free()
