/* Compute, then MPI_Allreduce (MPI_SUM) of bytes/8 doubles, repeated; the algorithm is
 * SMPI's --cfg=smpi/allreduce:NAME.  argv: bytes iterations compute_seconds.
 * Twin: programs.allreduce. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <smpi/smpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = atoi(argv[1]), iters = atoi(argv[2]);
  double compute = atof(argv[3]);
  int count = n / 8 > 0 ? n / 8 : 1;
  double *in = calloc(count, sizeof(double)), *out = calloc(count, sizeof(double));
  for (int i = 0; i < iters; i++) {
    smpi_execute(compute);
    MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  double t = MPI_Wtime(), tmax;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("BSIM_SMPI_TIME %.17g\n", tmax);
  free(in); free(out);
  MPI_Finalize();
  return 0;
}
