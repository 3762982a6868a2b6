# ranks: 1
from mpi4py import MPI

vec = MPI.FLOAT.Create_vector(3, 2, 5)
print(vec.Get_size(), vec.Get_extent(), vec.Get_true_extent())
print(MPI.DOUBLE.Get_size(), MPI.INT.Get_extent(), MPI.CHAR.size)
combiner = vec.Get_envelope()
print(combiner)
vec.Free()
