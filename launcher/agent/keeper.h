// Keeper: a tiny process forked when the agent starts that kills every step's
// process group if the agent dies without cleaning up (SIGKILL, OOM killer).
//
// The agent tells the keeper, through a pipe, each process group it creates
// (before the step may run anything) and each one it has finished with. The
// keeper holds only the pipe's read end; when the agent dies, however it
// dies, the kernel closes the write end, the keeper reads EOF, SIGKILLs every
// group still recorded and exits. On a clean exit the agent has forgotten
// every group, so the keeper kills nothing. See docs/agent.md.
//
// Move-only; not thread-safe (the agent is single-threaded).
#pragma once

#include <sys/types.h>

#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::agent {

class Keeper {
 public:
  // Forks the keeper. Call before any step exists.
  static Result<Keeper> Start();
  Keeper(Keeper&& other) noexcept;
  Keeper& operator=(Keeper&&) = delete;
  // Closes the pipe (the keeper kills what is still recorded and exits) and
  // reaps the keeper.
  ~Keeper();

  // Records process group `pgid`. Returns false when the keeper is gone (the
  // step then has no protection against the agent's death).
  bool Track(pid_t pgid);
  // Forgets `pgid`: its leader was reaped and the group swept.
  bool Forget(pid_t pgid);

  pid_t pid() const { return pid_; }

 private:
  Keeper(pid_t pid, UniqueFd pipe) : pid_(pid), pipe_(std::move(pipe)) {}
  bool Send(int32_t record);
  pid_t pid_ = -1;
  UniqueFd pipe_;
};

}  // namespace scimesh::agent
