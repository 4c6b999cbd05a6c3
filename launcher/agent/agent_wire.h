// The node agent's channel format (docs/agent.md): commands the launcher
// writes to the agent's stdin and events the agent writes to its stdout, one
// JSON object per line. One model for both sides: the agent and the
// launcher's AgentChannel parse and write these types with this code.
//
// Stateless functions over values; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::agent {

// Bounds on what one command may ask for; anything beyond is refused.
inline constexpr size_t kMaxIdBytes = 128;
inline constexpr size_t kMaxArgs = 4096;
inline constexpr size_t kMaxEnv = 4096;
inline constexpr size_t kMaxCpus = 1024;  // CPU_SETSIZE: OS PU indices 0..1023
inline constexpr int64_t kMaxGraceMs = 24LL * 3600 * 1000;

// The direct channel's secret (docs/agent.md "The direct channel"): the
// first line of the agent's stdin, and its first line back on the socket.
inline constexpr size_t kDirectSecretChars = 64;
// 64 lowercase hex digits.
bool IsDirectSecret(std::string_view s);

// {"op":"start"}: fork and exec one step.
// What a step the agent forks never inherits from the agent's own job step:
// srun's task identity and PMI, which would make an MPI program look for a
// step manager that is not there. Names, or prefixes ending in '*'.
inline constexpr const char* kAgentStepUnset[] = {
    "SLURM_STEP*", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_TASK_PID", "SLURM_CPU_BIND*",
    "SLURM_NTASKS*", "SLURM_NPROCS", "SLURM_TASKS_PER_NODE", "SLURM_SRUN_COMM*", "SLURM_LAUNCH_NODE_IPADDR",
    "SLURM_DISTRIBUTION", "SLURM_MPI_TYPE", "PMI_*", "PMIX_*", "OMPI_*"};

struct AgentStart {
  std::string id;                          // opaque, 1..128 printable ASCII bytes
  std::vector<std::string> argv;           // argv[0] searched in PATH when it has no '/'
  std::vector<std::string> unset;          // names ("X") or prefixes ("SLURM_*") removed from
                                           // the agent's environment before `env` is applied,
                                           // besides kAgentStepUnset (always)
  std::map<std::string, std::string> env;  // set on top of the agent's environment
  std::string cwd;                         // absolute; empty: the agent's own
  std::string stdout_path, stderr_path;    // absolute; empty: /dev/null. On the wire also a
                                           // file name in cwd, so that lines stay short: srun
                                           // forwards a line over 1,024 bytes in pieces, and
                                           // the second waits ~40 ms (Nagle, delayed ACK)
  std::vector<int> cpus;                   // OS PU indices; empty: not pinned
};
// {"op":"signal"}: a signal to the step's whole process group.
struct AgentSignal {
  std::string id;
  int signal = 0;  // 1..64
};
// {"op":"stop"}: SIGTERM to the group, SIGKILL to the group after the grace.
struct AgentStop {
  std::string id;
  int64_t grace_ms = 0;
};
struct AgentPing {};

using AgentCommand = std::variant<AgentStart, AgentSignal, AgentStop, AgentPing>;

// One event line from the agent.
struct AgentEvent {
  enum class Kind { kReady, kStarted, kFailed, kExited, kPong, kError };
  Kind kind = Kind::kError;
  std::string id;        // started, failed, exited; error (when about a step)
  int64_t pid = 0;       // ready (the agent's), started, exited (the step's)
  bool signaled = false; // exited: killed by a signal
  int code = 0;          // exited: exit status, or the signal number
  std::string error;     // failed, error: what went wrong
  std::string host, version;  // ready
  int64_t memory_limit_mib = 0;  // exited: killed by its memory cgroup's limit of that many MiB
                                 // (-1: by the OOM killer, no limit set); 0: not (absent on the wire)
};

// "ready", "started", ...
std::string_view EventName(AgentEvent::Kind kind);

// Parses one command line (without its newline). kInvalidArgument says which
// field is wrong and why; never throws, whatever the input.
Result<AgentCommand> ParseAgentCommand(std::string_view line);
// The command as one line of JSON, newline included.
std::string AgentCommandLine(const AgentCommand& command);

// Parses one event line (without its newline); kInvalidArgument when it is not
// an event this version knows.
Result<AgentEvent> ParseAgentEvent(std::string_view line);
// The event as one line of JSON, newline included.
std::string AgentEventLine(const AgentEvent& event);

}  // namespace scimesh::agent
