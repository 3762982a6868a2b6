/* Compute, then one collective over COMM_WORLD, repeated; the algorithm is SMPI's
 * --cfg=smpi/OP:NAME.  argv: bytes iterations compute_seconds op, op one of bcast, reduce,
 * gather, scatter, allgather, alltoall, reduce_scatter, barrier.  bytes is bsim's size of
 * the collective (docs/collectives.md): the buffer (bcast), the vector of doubles (reduce,
 * reduce_scatter), the root's buffer of P blocks (gather, scatter), one rank's receive
 * (allgather) or send (alltoall) buffer of P blocks; ignored by barrier.  Root 0, MPI_SUM
 * of doubles.  Twin: programs.collective. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <smpi/smpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = atoi(argv[1]), iters = atoi(argv[2]);
  double compute = atof(argv[3]);
  const char *op = argv[4];
  int block = n / size, doubles = n / 8;
  char *a = calloc(n > 0 ? n : 1, 1), *b = calloc(n > 0 ? n : 1, 1);
  int *counts = malloc(size * sizeof(int));
  for (int r = 0; r < size; r++) counts[r] = doubles / size;
  for (int i = 0; i < iters; i++) {
    smpi_execute(compute);
    if (!strcmp(op, "bcast"))
      MPI_Bcast(a, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (!strcmp(op, "reduce"))
      MPI_Reduce(a, b, doubles, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    else if (!strcmp(op, "gather"))
      MPI_Gather(a, block, MPI_BYTE, b, block, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (!strcmp(op, "scatter"))
      MPI_Scatter(a, block, MPI_BYTE, b, block, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (!strcmp(op, "allgather"))
      MPI_Allgather(a, block, MPI_BYTE, b, block, MPI_BYTE, MPI_COMM_WORLD);
    else if (!strcmp(op, "alltoall"))
      MPI_Alltoall(a, block, MPI_BYTE, b, block, MPI_BYTE, MPI_COMM_WORLD);
    else if (!strcmp(op, "reduce_scatter"))
      MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(op, "barrier"))
      MPI_Barrier(MPI_COMM_WORLD);
    else {
      fprintf(stderr, "collective: unknown op %s\n", op);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  double t = MPI_Wtime(), tmax;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("BSIM_SMPI_TIME %.17g\n", tmax);
  free(a); free(b); free(counts);
  MPI_Finalize();
  return 0;
}
