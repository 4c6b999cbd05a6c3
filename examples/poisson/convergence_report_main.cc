// convergence_report: the report step of a mesh study: observed order of
// accuracy from the solves' outputs, as a table artifact and the step output.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <exception>

#include "examples/poisson/report_program.h"

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::strcmp(argv[1], "--standalone") == 0)
      return scimesh::poisson::RunReportStandalone(argv[2]);  // no MPI at all
    if (argc != 1) {
      (void)std::fprintf(stderr, "usage: convergence_report                     (as a scimesh step)\n"
                                 "       convergence_report --standalone '<previous outputs json>'\n");
      return 2;
    }
    MPI_Init(&argc, &argv);
    const int rc = scimesh::poisson::RunReportAsStep();
    MPI_Finalize();
    return rc;
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "convergence_report: unexpected error: %s\n", e.what());
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Abort(MPI_COMM_WORLD, 4);
    return 4;
  }
}
