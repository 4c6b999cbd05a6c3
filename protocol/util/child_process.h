// ChildProcess: the one way this project starts a program and waits for it.
//
// SpawnChild builds argv and the environment before the fork, gives the
// child the stdio it is told, default handling of every signal with none
// blocked, and closes every other descriptor: a step, an agent or a helper
// never holds the launcher's sockets, pipes or files. The exec's failure
// comes back as a Status that names the program (never its full path).
// WaitChild/PollChild are the EINTR-safe waits.
#pragma once

#include <sched.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh {

// A child's argv and environment as execve wants them, built before fork
// (after it, only async-signal-safe calls). Not copyable: the char* arrays
// point into its own strings.
class ExecArgs {
 public:
  // This process's environment without what `drop` names and what `env`
  // sets, then `env`.
  ExecArgs(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
           const std::function<bool(std::string_view name)>& drop = {});
  ExecArgs(const ExecArgs&) = delete;
  ExecArgs& operator=(const ExecArgs&) = delete;

  char** argv() { return argv_.data(); }
  char** envp() { return envp_.data(); }

 private:
  std::vector<std::string> args_, env_;
  std::vector<char*> argv_, envp_;
};

// How a child ended.
struct ChildExit {
  bool signaled = false;
  int code = 0;  // exit status, or the signal number when signaled

  static ChildExit FromWaitStatus(int status);
  std::string Describe() const;  // "exit status 3", "killed by signal 9 (Killed)"
  int ShellStatus() const { return signaled ? 128 + code : code; }
};

// The descriptor meaning /dev/null in ChildSpec's stdio.
inline constexpr int kDevNull = -1;

struct ChildSpec {
  std::vector<std::string> argv;                     // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;            // set on top of this process's environment
  std::function<bool(std::string_view name)> unset;  // this process's variables not passed on
  // The child's stdin, stdout and stderr: descriptors of this process
  // (0, 1 or 2 pass this process's own on), or kDevNull. Left open here.
  int stdin_fd = kDevNull, stdout_fd = kDevNull, stderr_fd = kDevNull;
  std::string cwd;          // empty: this process's
  bool own_group = false;   // a process group of its own, whose id is the child's pid
  std::optional<cpu_set_t> cpus;  // bound to these PUs before its program runs (threads included)
  // Descriptors 3 and up that this process holds pass on too. Only for a
  // transparent wrapper (scimesh-rank), whose inherited descriptors belong
  // to the MPI runtime (srun's PMI_FD) and whose own are close-on-exec.
  bool pass_descriptors = false;

  // These need code between fork and exec (the others use posix_spawn,
  // which does not copy this process's memory):
  const rlimit* nofile = nullptr;   // the child's RLIMIT_NOFILE (lowering only)
  bool dies_with_parent = false;    // SIGKILL when this process dies (PR_SET_PDEATHSIG)
  // Runs here once the child exists and before its program may start (the
  // child waits), e.g. to record its process group with a keeper.
  std::function<void(pid_t)> before_exec;
};

// Starts `spec`; returns the child's pid once its program runs. Fails, with
// the child already reaped, kNotFound ("cannot start 'prog': No such file or
// directory", "cannot enter the working directory: ..."), kPermissionDenied,
// kInvalidArgument (empty argv; cannot pin), kUnavailable (fork/EAGAIN) or
// kIo. Thread-safe; pinning binds the calling thread for the call's length.
Result<pid_t> SpawnChild(const ChildSpec& spec);

// Blocks until `pid` (a child of this process) has ended; EINTR-safe.
// nullopt: it is not a child (already reaped).
std::optional<ChildExit> WaitChild(pid_t pid);

// Non-blocking: the exit once `pid` has ended, nullopt while it runs.
std::optional<ChildExit> PollChild(pid_t pid);

// SIGKILL to `pid`'s process group (`pid` leads it), then WaitChild.
void KillGroupAndReap(pid_t pid);

}  // namespace scimesh
