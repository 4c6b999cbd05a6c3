/* Consumer check in C: the installed header and library, linked by find_package or pkg-config.
 * Without a lease, scimesh_step_begin must refuse with SCIMESH_ERR_NO_LEASE. */
#include <scimesh/step.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  scimesh_step* step = NULL;
  int rc = scimesh_step_begin(MPI_COMM_WORLD, argc > 1 ? argv[1] : "/nonexistent/attempt", &step);
  printf("c: begin -> %d (%s)\n", rc, scimesh_strerror(rc));
  MPI_Finalize();
  return rc == SCIMESH_ERR_NO_LEASE && step == NULL ? 0 : 1;
}
