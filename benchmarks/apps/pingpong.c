/* Ping-pong between ranks 0 and 1 (benchmarks/traces_apps.py --pingpong): for each size,
 * REPS round trips, each timed; rank 0 prints "bytes median_one_way_seconds" per size
 * (half the median round trip), the figures a Hockney fit takes, measured with the MPI
 * this program is built with (the applications' own, where bsim calibrate network uses
 * mpi4py's).  argv: repetitions. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, reps = argc > 1 ? atoi(argv[1]) : 200;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  static const int sizes[] = {0, 64, 1024, 8192, 65536, 262144};
  char *buf = calloc(262144, 1);
  double *t = malloc(sizeof *t * reps);
  for (int k = 0; k < (int)(sizeof sizes / sizeof *sizes); k++) {
    int n = sizes[k];
    for (int i = -10; i < reps; i++) {   /* 10 warm-up round trips */
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
      if (i >= 0) t[i] = MPI_Wtime() - t0;
    }
    qsort(t, reps, sizeof *t, cmp);
    if (rank == 0) printf("%d %.9e\n", n, 0.5 * t[reps / 2]);
  }
  free(buf); free(t);
  MPI_Finalize();
  return 0;
}
