// Ending a step the same way in both of the study's programs: end it (a lost
// lease is no error: nothing more may be reported), then let every rank exit
// with rank 0's code, since mpirun and srun report the worst rank's status.
#pragma once

#include <mpi.h>
#include <scimesh/step.hpp>
#include <spdlog/spdlog.h>

namespace scimesh::poisson {

// `exit_code` is rank 0's verdict; 3 when the step could not be ended.
inline int EndStepAndAgree(Step& step, int exit_code, spdlog::logger& log) {
  const int end = step.end();
  if (end != SCIMESH_OK && end != SCIMESH_ERR_LEASE_LOST) {
    log.error("cannot end the step: {}: {}", scimesh_strerror(end), scimesh_step_last_error());
    return 3;
  }
  MPI_Bcast(&exit_code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return exit_code;
}

}  // namespace scimesh::poisson
