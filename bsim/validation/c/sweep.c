/* KBA wavefront sweep (Sweep3D's pattern) on a px x py grid (px = the largest divisor
 * of size <= sqrt(size)), not periodic: for each of the four corners the sweep starts
 * from, and each of KBLOCKS k-blocks, receive from the upstream x and y neighbours,
 * compute, send to the downstream ones (blocking calls, as Sweep3D).
 * argv: bytes iterations compute_seconds.  Twin: programs.sweep. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <smpi/smpi.h>

#define KBLOCKS 4

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
  char *buf = malloc(n > 0 ? n : 1);
  for (int i = 0; i < iters; i++) {
    for (int corner = 0; corner < 4; corner++) {
      int dx = (corner & 1) ? -1 : 1, dy = (corner & 2) ? -1 : 1;
      int ux = x - dx, uy = y - dy, wx = x + dx, wy = y + dy;   /* up- and downstream */
      for (int k = 0; k < KBLOCKS; k++) {
        if (ux >= 0 && ux < px)
          MPI_Recv(buf, n, MPI_BYTE, ux + y * px, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (uy >= 0 && uy < py)
          MPI_Recv(buf, n, MPI_BYTE, x + uy * px, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        smpi_execute(compute);
        if (wx >= 0 && wx < px) MPI_Send(buf, n, MPI_BYTE, wx + y * px, 0, MPI_COMM_WORLD);
        if (wy >= 0 && wy < py) MPI_Send(buf, n, MPI_BYTE, x + wy * px, 1, MPI_COMM_WORLD);
      }
    }
  }
  double t = MPI_Wtime(), tmax;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("BSIM_SMPI_TIME %.17g\n", tmax);
  free(buf);
  MPI_Finalize();
  return 0;
}
