/* A tiny MPI application (tests/test_traces_record.py, docs/tutorial.md part 2): a ring
 * exchange (Sendrecv), a nonblocking exchange with both ring neighbours (Irecv, Isend,
 * Waitall), a busy compute block, an Allreduce, a Bcast from rank 0, and an Allreduce on
 * an even/odd sub-communicator.
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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iters = argc > 1 ? atoi(argv[1]) : 10, n = argc > 2 ? atoi(argv[2]) : 1024;
  double compute = (argc > 3 ? atof(argv[3]) : 100.0) * 1e-6;
  char *sb = calloc(n + 1, 1), *rb = calloc(2 * (n + 1), 1);
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  double t0 = MPI_Wtime(), x = rank, y;
  for (int i = 0; i < iters; i++) {
    MPI_Sendrecv(sb, n, MPI_BYTE, right, 1, rb, n, MPI_BYTE, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Request r[4];
    MPI_Irecv(rb, n, MPI_BYTE, left, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(rb + n, n, MPI_BYTE, right, 3, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(sb, n, MPI_BYTE, right, 2, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(sb, n, MPI_BYTE, left, 3, MPI_COMM_WORLD, &r[3]);
    busy(compute);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(sb, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, half);
  }
  double t = MPI_Wtime() - t0;
  if (rank == 0) printf("traces_app %d ranks %.6f s\n", size, t);
  MPI_Comm_free(&half);
  free(sb); free(rb);
  MPI_Finalize();
  return 0;
}
