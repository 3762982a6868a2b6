/* Ping-pong between ranks 0 and size-1 (the others idle).  argv: bytes iterations
 * compute_seconds (unused).  Twin: programs.pingpong. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = atoi(argv[1]), iters = atoi(argv[2]);
  char *b = malloc(n > 0 ? n : 1);
  int last = size - 1;
  for (int i = 0; i < iters; i++) {
    if (rank == 0) {
      MPI_Send(b, n, MPI_BYTE, last, 0, MPI_COMM_WORLD);
      MPI_Recv(b, n, MPI_BYTE, last, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == last) {
      MPI_Recv(b, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(b, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  double t = MPI_Wtime(), tmax;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("BSIM_SMPI_TIME %.17g\n", tmax);
  free(b);
  MPI_Finalize();
  return 0;
}
