// Signalling a whole job step cluster-wide through slurmctld
// (slurm_kill_job_step), from inside a SLURM process.
//
// The function is provided by the host process (slurmstepd links
// libslurmfull); the plugin does not link libslurm and refers to it weakly,
// so a host without it yields kUnavailable instead of a failed dlopen.
// Thread-safe; blocks for at most SLURM's MessageTimeout.
#pragma once

#include <cstdint>

#include "protocol/status.h"

namespace scimesh::spank {

Status SignalJobStep(uint32_t job_id, uint32_t step_id, int signal);

// Whether the host process provides slurm_kill_job_step.
bool CanSignalJobSteps();

}  // namespace scimesh::spank
