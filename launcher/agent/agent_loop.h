// AgentLoop: the node agent's one event loop -- commands from stdin (and the
// direct channel), step exits through pidfds, TERM/INT/HUP through a
// signalfd, stop deadlines as the epoll timeout. Single-threaded; no thread
// per step.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <optional>
#include <string>

#include "launcher/agent/keeper.h"

namespace scimesh::agent {

struct AgentOptions {
  std::chrono::milliseconds kill_grace{2000};  // SIGTERM -> SIGKILL when the agent shuts down
  int in_fd = 0;   // commands
  int out_fd = 1;  // events
  // The direct channel (connect_back.h), or -1: commands are read from it
  // as from in_fd, and its end ends the agent as stdin's does. The caller
  // points out_fd at it too.
  int direct_fd = -1;
  std::string version;  // sent in the ready event
  // The open-files limit steps get back: the agent raises its own soft limit
  // (one pidfd per step) but a step starts with what the agent was given.
  std::optional<rlimit> step_nofile;
};

// Serves commands until stdin or the direct channel ends or a TERM/INT/HUP
// arrives, then stops every step it started (SIGTERM to each group, SIGKILL
// after kill_grace), waits for their leaders and returns the exit status: 0
// after an EOF, 128 + the signal after a signal, 1 when the loop itself
// failed (epoll). Must be called with TERM/INT/HUP not yet blocked; blocks
// them. Not thread-safe; call once.
int RunAgent(const AgentOptions& options, Keeper& keeper);

}  // namespace scimesh::agent
