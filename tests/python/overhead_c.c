/* The C side of the step-overhead benchmark (tests/python/overhead-bench.sh):
 * begin -> end with nothing in between, timed on rank 0 after a barrier;
 * prints "begin_ms=B end_ms=E" on rank 0's stdout (step.out). */
#include <mpi.h>
#include <scimesh/step.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  scimesh_step* step = NULL;
  int rc = scimesh_step_begin(MPI_COMM_WORLD, NULL, &step);
  const double t1 = MPI_Wtime();
  if (rc == SCIMESH_OK) rc = scimesh_step_set_output(step, "{}");
  if (rc == SCIMESH_OK) rc = scimesh_step_end(&step);
  const double t2 = MPI_Wtime();
  if (rc != SCIMESH_OK) fprintf(stderr, "overhead_c: %s\n", scimesh_step_last_error());
  if (rank == 0) printf("begin_ms=%.3f end_ms=%.3f\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3);
  MPI_Finalize();
  return rc == SCIMESH_OK ? 0 : 1;
}
