// slurm_kill_job_step through a weak reference to the host's libslurmfull.
#include "plugin/step_signal.h"

#include <cerrno>
#include <cstring>
#include <string>

extern "C" {
int slurm_kill_job_step(uint32_t job_id, uint32_t step_id, uint16_t signal) __attribute__((weak));
char* slurm_strerror(int errnum) __attribute__((weak));
}

namespace scimesh::spank {

bool CanSignalJobSteps() { return slurm_kill_job_step != nullptr; }

Status SignalJobStep(uint32_t job_id, uint32_t step_id, int signal) {
  if (!CanSignalJobSteps()) return Status::Unavailable("slurm_kill_job_step is not available in this process");
  errno = 0;
  if (slurm_kill_job_step(job_id, step_id, static_cast<uint16_t>(signal)) == 0) return Status::Ok();
  int err = errno;
  std::string cause = slurm_strerror ? slurm_strerror(err) : std::strerror(err);
  return Status::Unavailable("slurm_kill_job_step(" + std::to_string(job_id) + "." + std::to_string(step_id) +
                             ", signal " + std::to_string(signal) + "): " + cause);
}

}  // namespace scimesh::spank
