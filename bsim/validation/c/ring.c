/* Ring: every rank posts a receive from its left, sends to its right, computes,
 * waits for both.  argv: bytes iterations compute_seconds.  Twin: programs.ring. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <smpi/smpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = atoi(argv[1]), iters = atoi(argv[2]);
  double compute = atof(argv[3]);
  char *sb = malloc(n > 0 ? n : 1), *rb = malloc(n > 0 ? n : 1);
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  for (int i = 0; i < iters; i++) {
    MPI_Request r[2];
    MPI_Irecv(rb, n, MPI_BYTE, left, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(sb, n, MPI_BYTE, right, 0, MPI_COMM_WORLD, &r[1]);
    smpi_execute(compute);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
  double t = MPI_Wtime(), tmax;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("BSIM_SMPI_TIME %.17g\n", tmax);
  free(sb); free(rb);
  MPI_Finalize();
  return 0;
}
