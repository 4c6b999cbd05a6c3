/* Test-bed smoke program: every rank reports where it ran, and rank 0 checks an
 * MPI_Allreduce of the rank numbers. Exit 0 only when the sum is right. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  long mine = rank, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d of %d on %s\n", rank, size, host);
  fflush(stdout);

  long expected = (long)size * (size - 1) / 2;
  int ok = sum == expected;
  if (rank == 0) {
    printf("allreduce sum=%ld expected=%ld %s\n", sum, expected, ok ? "OK" : "WRONG");
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
