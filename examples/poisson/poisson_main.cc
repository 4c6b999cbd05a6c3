// poisson: a 3D Poisson solve (7-point FD, CG, MPI domain decomposition) run
// as a scimesh step, or standalone with `--standalone '<input json>'`.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <exception>

#include "examples/poisson/poisson_program.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 2;
  try {
    if (argc == 3 && std::strcmp(argv[1], "--standalone") == 0) {
      rc = scimesh::poisson::RunStandalone(argv[2]);
    } else if (argc == 1) {
      rc = scimesh::poisson::RunAsStep();
    } else {
      (void)std::fprintf(stderr, "usage: poisson                          (as a scimesh step)\n"
                                 "       poisson --standalone '<input json>'\n");
    }
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "poisson: unexpected error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  MPI_Finalize();
  return rc;
}
