/* The recording library's cost per call: N MPI_Allreduce of one int on MPI_COMM_SELF, best
 * of five repetitions (benchmarks/traces_apps.py --overhead). argv: N. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = atoi(argv[1]), x = 1, y;
  double best = 1e9;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    double t = (MPI_Wtime() - t0) / n;
    if (t < best) best = t;
  }
  printf("%.1f ns per MPI_Allreduce\n", best * 1e9);
  MPI_Finalize();
  return 0;
}
