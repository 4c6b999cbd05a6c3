// SpawnStep: starts one agent-run step (protocol/child_process.h) -- a
// process group of its own, pinned to its cpus, its output in files, nothing
// else of the agent's inherited -- and says whether the exec succeeded.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include "launcher/agent/agent_wire.h"
#include "launcher/agent/keeper.h"
#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::agent {

struct SpawnedStep {
  pid_t pid = -1;  // also the step's process group id
  UniqueFd pidfd;  // readable once the leader has exited (not yet reaped)
};

// Forks `start`. The group is recorded with `keeper` before the child may
// exec, so no instant exists in which the step runs unprotected. Blocks until
// the exec succeeded or failed (the child's own set-up plus execve). Fails
// with kNotFound/kPermissionDenied/kIo/kInvalidArgument and a message naming
// the stage ("cannot start 'prog': No such file or directory") -- program
// names, never full paths; the child is then reaped already. `nofile`, when
// given, is the step's RLIMIT_NOFILE.
Result<SpawnedStep> SpawnStep(const AgentStart& start, Keeper& keeper, const rlimit* nofile);

}  // namespace scimesh::agent
