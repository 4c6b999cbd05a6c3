// Every SLURM library function the plugin calls, for each SLURM release from
// 22.05 on (slurm_calls.cc says which release changed what).
//
// The host process (slurmstepd, srun, sbatch: libslurmfull) provides these
// functions. The plugin never links libslurm and refers to them weakly, so a
// host without one yields kUnavailable (or a stderr log line) instead of a
// failed dlopen. Their prototypes come from SLURM's own headers only, so a
// release that changes one fails to compile here instead of passing garbage.
// Thread-safe; the calls to slurmctld block for at most its MessageTimeout.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <slurm/slurm_version.h>

#include "plugin/spank_log.h"
#include "protocol/util/status.h"

// 25.05 added slurm_spank_init_failure_mode, a variable the plugin defines
// (spank_scimesh.cc, the module's own file: it must be exported).
#define SCIMESH_SLURM_HAS_INIT_FAILURE_MODE (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0))

namespace scimesh::spank {

// Whether the host process provides slurm_kill_job_step.
bool CanSignalJobSteps();

// Sends `signal` to every task of job step job_id.step_id, on every node,
// through slurmctld.
Status SignalJobStep(uint32_t job_id, uint32_t step_id, int signal);

// slurmctld's state of the job (job_state, JOB_* with flags); kUnavailable
// when the host cannot ask or slurmctld does not answer.
Result<uint32_t> LoadJobState(uint32_t job_id);

// Writes `text` to the host's SLURM log at `level`; false when the host
// provides no SLURM logger (the caller writes elsewhere).
bool WriteSlurmLog(LogLevel level, const std::string& text);

}  // namespace scimesh::spank
