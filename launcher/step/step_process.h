// StepProcess: one launched step -- a child in a process group of its own
// (srun, mpirun or the program), its output in files, and a way to stop it
// that reaches everything it started.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::launcher {

struct SpawnSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // set on top of the launcher's environment
  std::string cwd;                         // the attempt directory
  std::string stdout_path, stderr_path;    // created 0644, truncated
  // Bound to these PUs (those of them this process may use; none of them:
  // left unbound, as the scheduler's binding wins). Empty: not bound.
  std::vector<int> pin;
  bool keyless = false;  // SCIMESH_TOKEN / SCIMESH_TOKEN_FILE are not inherited
};

// How a step process ended.
struct ExitInfo {
  bool signaled = false;
  int code = 0;    // exit status, or the signal number when signaled
  int64_t memory_limit_mib = 0;  // killed by its memory cgroup's limit (MiB; -1: no limit); 0: not
  std::string Describe() const;  // "exit status 3", "killed by signal 9 (Killed)"
};

// Owns the child; move-only. Not thread-safe: one owner thread.
class StepProcess {
 public:
  static Result<StepProcess> Spawn(const SpawnSpec& spec);
  StepProcess(StepProcess&& other) noexcept;
  StepProcess& operator=(StepProcess&&) = delete;
  ~StepProcess();  // a child still running is killed (SIGKILL to its group) and reaped

  pid_t pid() const { return pid_; }
  // Readable once the child has ended (for an event loop); -1 where pidfds
  // are unavailable (Linux < 5.3): poll then.
  int pidfd() const { return pidfd_; }

  // Non-blocking: the exit once the child has ended.
  std::optional<ExitInfo> Poll();

  // Blocks up to `timeout` for the exit: asleep on a pidfd until the child
  // ends (no periodic wake-ups), or polling every 20 ms where pidfds are
  // unavailable.
  std::optional<ExitInfo> WaitFor(std::chrono::milliseconds timeout);

  // Sends `sig` to the child's whole process group.
  void Signal(int sig);

  // SIGTERM to the group, then SIGKILL after `grace` if still running; waits
  // for the exit.
  ExitInfo Stop(std::chrono::milliseconds grace);

 private:
  explicit StepProcess(pid_t pid);
  pid_t pid_ = -1;
  int pidfd_ = -1;  // readable once the child has ended; -1 if unavailable
  std::optional<ExitInfo> exit_;
};

}  // namespace scimesh::launcher
