/* 2-D halo exchange on a px x py periodic grid (px = the largest divisor of size
 * <= sqrt(size)): post four receives, four sends, compute, wait for all eight.
 * argv: bytes iterations compute_seconds.  Twin: programs.halo2d. */
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
  int px = 1;
  for (int d = 1; d * d <= size; d++) if (size % d == 0) px = d;
  int py = size / px, x = rank % px, y = rank / px;
  int nb[4] = {((x + 1) % px) + y * px, ((x - 1 + px) % px) + y * px,
               x + ((y + 1) % py) * px, x + ((y - 1 + py) % py) * px};
  char *sb = malloc(n > 0 ? n : 1), *rb = malloc(4 * (n > 0 ? n : 1));
  for (int i = 0; i < iters; i++) {
    MPI_Request r[8];
    for (int k = 0; k < 4; k++)
      MPI_Irecv(rb + k * n, n, MPI_BYTE, nb[k ^ 1], k, MPI_COMM_WORLD, &r[k]);
    for (int k = 0; k < 4; k++)
      MPI_Isend(sb, n, MPI_BYTE, nb[k], k, MPI_COMM_WORLD, &r[4 + k]);
    smpi_execute(compute);
    MPI_Waitall(8, r, MPI_STATUSES_IGNORE);
  }
  double t = MPI_Wtime(), tmax;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("BSIM_SMPI_TIME %.17g\n", tmax);
  free(sb); free(rb);
  MPI_Finalize();
  return 0;
}
