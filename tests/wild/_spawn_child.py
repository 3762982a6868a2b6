from mpi4py import MPI

parent = MPI.Comm.Get_parent()
value = parent.bcast(None, root=0)
parent.reduce(value + parent.Get_rank(), op=MPI.SUM, root=0)
parent.Disconnect()
