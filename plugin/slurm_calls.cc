// The one file that branches on SLURM_VERSION_NUMBER: SLURM's functions as
// each release declares them.
//
// What changed, release by release (each is checked by compiling this file
// against that release's headers: `scripts/test --slurm-headers`):
//   22.05  slurm_kill_job_step(job_id, step_id, signal)
//   23.02  slurm_kill_job_step(job_id, step_id, signal, flags) (seen in 23.11;
//          23.02 is not in ../shared/slurm and is assumed to be the first)
//   25.05  slurm_spank_init_failure_mode (SCIMESH_SLURM_HAS_INIT_FAILURE_MODE, slurm_calls.h)
//   25.11  slurm_kill_job_step(slurm_step_id_t *, signal, flags)
//   26.05  slurm_load_job(resp, slurm_step_id_t, show_flags): a step id, not a job id
// slurm_free_job_info_msg, slurm_strerror and the slurm_error/info/debug
// loggers are unchanged from 22.05 to 26.05.
#include "plugin/slurm_calls.h"

#include <cerrno>
#include <cstring>

// spank.h declares the loggers without C linkage when read by C++.
extern "C" {
#include <slurm/spank.h>
}
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

// Weak: unit tests link without SLURM, and the plugin never links libslurm.
#pragma weak slurm_kill_job_step
#pragma weak slurm_load_job
#pragma weak slurm_free_job_info_msg
#pragma weak slurm_strerror
#pragma weak slurm_error
#pragma weak slurm_info
#pragma weak slurm_debug

namespace scimesh::spank {
namespace {

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
// Field by field: SLURM_STEP_ID_INITIALIZER is a C compound literal.
slurm_step_id_t StepId(uint32_t job_id, uint32_t step_id) {
  slurm_step_id_t id;
  std::memset(&id, 0, sizeof id);  // sluid 0: address the job by its id
  id.job_id = job_id;
  id.step_het_comp = NO_VAL;
  id.step_id = step_id;
  return id;
}
#endif

int KillJobStep(uint32_t job_id, uint32_t step_id, uint16_t signal) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
  slurm_step_id_t id = StepId(job_id, step_id);
  return slurm_kill_job_step(&id, signal, 0);
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
  return slurm_kill_job_step(job_id, step_id, signal, 0);
#else
  return slurm_kill_job_step(job_id, step_id, signal);
#endif
}

int LoadJob(job_info_msg_t** msg, uint32_t job_id) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
  return slurm_load_job(msg, StepId(job_id, NO_VAL), SHOW_ALL);
#else
  return slurm_load_job(msg, job_id, SHOW_ALL);
#endif
}

}  // namespace

bool CanSignalJobSteps() { return slurm_kill_job_step != nullptr; }

Status SignalJobStep(uint32_t job_id, uint32_t step_id, int signal) {
  if (!CanSignalJobSteps()) return Status::Unavailable("slurm_kill_job_step is not available in this process");
  errno = 0;
  if (KillJobStep(job_id, step_id, static_cast<uint16_t>(signal)) == 0) return Status::Ok();
  int err = errno;
  std::string cause = slurm_strerror ? slurm_strerror(err) : std::strerror(err);
  return Status::Unavailable("slurm_kill_job_step(" + std::to_string(job_id) + "." + std::to_string(step_id) +
                             ", signal " + std::to_string(signal) + "): " + cause);
}

Result<uint32_t> LoadJobState(uint32_t job_id) {
  if (!slurm_load_job || !slurm_free_job_info_msg) {
    return Status::Unavailable("slurm_load_job is not available in this process");
  }
  job_info_msg_t* msg = nullptr;
  if (LoadJob(&msg, job_id) != 0 || msg == nullptr) {
    return Status::Unavailable("slurmctld did not answer about job " + std::to_string(job_id));
  }
  uint32_t state = msg->record_count > 0 ? msg->job_array[0].job_state : 0;
  slurm_free_job_info_msg(msg);
  return state;
}

bool WriteSlurmLog(LogLevel level, const std::string& text) {
  switch (level) {
    case LogLevel::kError:
      if (!slurm_error) return false;
      slurm_error("spank_scimesh: %s", text.c_str());
      return true;
    case LogLevel::kInfo:
      if (!slurm_info) return false;
      slurm_info("spank_scimesh: %s", text.c_str());
      return true;
    case LogLevel::kDebug:
      if (!slurm_debug) return false;
      slurm_debug("spank_scimesh: %s", text.c_str());
      return true;
  }
  return false;
}

}  // namespace scimesh::spank
