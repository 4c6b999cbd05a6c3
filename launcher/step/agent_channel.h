// AgentChannel: the launcher's side of one node agent (docs/agent.md) --
// spawns it from an argv (plain `scimesh-agent`, or prefixed with
// `srun --overlap -N1 -n1 -w NODE`), writes commands to it and reads its
// events.
//
// The agent's stdin and stdout are one end of a Unix socket pair; the
// launcher holds the other end (close-on-exec, non-blocking). Once the
// agent's direct channel (a TCP connection, docs/agent.md) is attached,
// commands go there and events are read from both. Writes block up to a
// timeout (5 s) when the agent does not read; reads never block.
// Sends use MSG_NOSIGNAL: a dead agent is a Status, not a SIGPIPE.
//
// Not thread-safe: one owner thread (the launcher's event loop). Move-only;
// the destructor SIGKILLs the agent process if it is still running and reaps
// it (the agent's keeper then kills its steps).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/agent/agent_wire.h"
#include "launcher/agent/line_splitter.h"
#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::launcher {

using agent::AgentEvent;
using agent::AgentStart;

class AgentChannel {
 public:
  // Starts `argv` (argv[0] searched in PATH) with the channel as its stdin
  // and stdout and the launcher's stderr. Does not wait for `ready`.
  static Result<AgentChannel> Spawn(const std::vector<std::string>& argv);
  AgentChannel(AgentChannel&& other) noexcept;
  AgentChannel& operator=(AgentChannel&&) = delete;
  ~AgentChannel();

  // Readable when events (or the end of the channel) may be waiting: for
  // the launcher's epoll loop. Valid until the channel is destroyed.
  int fd() const { return socket_.get(); }
  // The direct channel's socket, or -1: watched like fd().
  int direct_fd() const { return direct_.get(); }
  // From now on commands go to `socket` (non-blocking), and its events are
  // read as the stdio channel's are; either one ending ends the channel.
  void AttachDirect(UniqueFd socket);
  // The agent process (or its srun).
  pid_t pid() const { return pid_; }

  // Non-blocking: the events in the complete lines that have arrived. A
  // malformed or oversize line is a kInvalidArgument Status (events before
  // it come first, it is reported on the next call, and the lines after it
  // are still served). The end of the channel is closed() == true.
  Result<std::vector<AgentEvent>> ReadEvents();
  // Blocks up to `timeout` until ReadEvents has something or the channel ends.
  Result<std::vector<AgentEvent>> WaitEvents(std::chrono::milliseconds timeout);
  // The agent closed its stdout: it exited (or its srun did).
  bool closed() const { return eof_; }

  Status Start(const AgentStart& start);
  Status Signal(std::string_view id, int sig);
  Status Stop(std::string_view id, std::chrono::milliseconds grace);
  Status Ping();
  // One raw line (the newline is added): commands this class has no method
  // for, and tests that play a hostile launcher.
  Status SendLine(std::string_view line);

  // Ends the agent's stdin (and the direct channel's sending side): it stops
  // its steps and exits. Events still arrive.
  void Close();
  // Waits up to `timeout` for the agent process to exit; its wait status
  // decoded as an exit code (128 + N when killed by signal N).
  std::optional<int> WaitExit(std::chrono::milliseconds timeout);

 private:
  AgentChannel(pid_t pid, UniqueFd socket) : pid_(pid), socket_(std::move(socket)) {}
  Status Write(std::string_view bytes);
  // Reads what `fd` has into `lines`, then its complete lines into pending_.
  void Drain(int fd, agent::LineSplitter& lines);

  pid_t pid_ = -1;
  UniqueFd socket_;
  UniqueFd direct_;
  agent::LineSplitter lines_, direct_lines_;
  std::deque<agent::LineSplitter::Line> pending_;
  bool eof_ = false, write_closed_ = false;
  std::optional<int> exit_;
};

}  // namespace scimesh::launcher
