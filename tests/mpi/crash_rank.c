/* An unmodified MPI program for system tests: every rank joins a barrier; the
 * rank named by CRASH_RANK (if any) then dies of SIGSEGV; the others wait in a
 * second barrier (and are killed with the step). Without CRASH_RANK it writes
 * output.json from rank 0 and exits 0. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  const char* crash = getenv("CRASH_RANK");
  if (crash != NULL && atoi(crash) == rank) raise(SIGSEGV);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    FILE* f = fopen("output.json", "w");
    if (f == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    fprintf(f, "{\"ranks\":%d}\n", size);
    fclose(f);
  }
  MPI_Finalize();
  return 0;
}
