// A step ended by the kernel's OOM killer under its allocation's memory
// limit (SLURM's ConstrainRAMSpace): told apart from a person's or a fault's
// SIGKILL, and reported `unservable` -- this allocation cannot give the step
// the memory it used, another may; no attempt is spent and this launcher is
// not offered the step again (docs/launcher.md "Report").
//
// Thread-safe functions of their inputs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "launcher/step/step_process.h"
#include "protocol/runtime/step_context.h"

namespace scimesh::launcher {

// `exit`: how the launched process ended (a node agent fills its
// memory_limit_mib); `step_err`: the tail of step.err, where srun writes
// "srun: error: n2: task 1: Out Of Memory" for a step it launched; `node`:
// where a step forked by a node agent ran; `per_node_mib`: the allocation's
// memory per node when known (SLURM_MEM_PER_NODE, sbatch --mem), else 0.
// nullopt when memory was not the cause.
std::optional<StepResult> MemoryLimitFailure(const ExitInfo& exit, std::string_view step_err, const std::string& node,
                                             int64_t per_node_mib = 0);

// SLURM_MEM_PER_NODE of this process's environment, in MiB; 0 when unset or not a number.
int64_t AllocationMemoryPerNodeMib();

}  // namespace scimesh::launcher
