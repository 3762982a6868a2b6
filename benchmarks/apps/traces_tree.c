/* A tiny MPI application with hpcc's shape (tests/test_traces_tree.py): ranks that run
 * different code.  HPL's own reduce and broadcast are binomial trees of point-to-point
 * messages (tag 9001): rank 0 receives from 1, 2, 4, ... and sends back in reverse, an
 * inner rank receives from its children and sends to its parent, a leaf only sends, so
 * at 4 ranks ranks 0, 1 and 3, and 2 each make their own sequence of calls.  Then, on a
 * P x Q grid of row and column communicators (MPI_Comm_split), a busy compute block, a
 * row broadcast from a root that moves along the row, and a column allreduce; a world
 * allreduce ends each iteration.
 * argv: iterations bytes compute_microseconds. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void busy(double seconds) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec) < seconds);
}

/* HPL_reduce's binomial tree to rank 0, then HPL_broadcast's back down it. */
static void tree_sum(double *x, MPI_Comm comm) {
  int rank, size, mask;
  double y;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (mask = 1; mask < size; mask <<= 1) {
    if (rank & mask) {
      MPI_Send(x, 1, MPI_DOUBLE, rank - mask, 9001, comm);
      break;
    }
    if (rank + mask < size) {
      MPI_Recv(&y, 1, MPI_DOUBLE, rank + mask, 9001, comm, MPI_STATUS_IGNORE);
      *x += y;
    }
  }
  int top = 1;
  while (top < size) top <<= 1;
  int low = rank ? (rank & -rank) : top;      /* rank's lowest set bit: its parent link */
  if (rank) MPI_Recv(x, 1, MPI_DOUBLE, rank - low, 9001, comm, MPI_STATUS_IGNORE);
  for (mask = low >> 1; mask > 0; mask >>= 1)
    if (rank + mask < size) MPI_Send(x, 1, MPI_DOUBLE, rank + mask, 9001, comm);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iters = argc > 1 ? atoi(argv[1]) : 4, n = argc > 2 ? atoi(argv[2]) : 1024;
  double compute = (argc > 3 ? atof(argv[3]) : 100.0) * 1e-6;
  int p = 1;
  for (int d = 1; d * d <= size; d++) if (size % d == 0) p = d;
  int q = size / p;
  MPI_Comm row, col;
  MPI_Comm_split(MPI_COMM_WORLD, rank / q, rank % q, &row);
  MPI_Comm_split(MPI_COMM_WORLD, rank % q, rank / q, &col);
  char *buf = calloc(n, 1);
  double x = rank + 1, y, t0 = MPI_Wtime();
  tree_sum(&x, MPI_COMM_WORLD);
  for (int i = 0; i < iters; i++) {
    busy(compute);
    MPI_Bcast(buf, n, MPI_BYTE, i % q, row);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, col);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  tree_sum(&x, MPI_COMM_WORLD);
  double t = MPI_Wtime() - t0;
  if (rank == 0) printf("traces_tree %d ranks %.6f s sum %g\n", size, t, x);
  MPI_Comm_free(&row);
  MPI_Comm_free(&col);
  free(buf);
  MPI_Finalize();
  return 0;
}
