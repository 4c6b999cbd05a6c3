// Spawning and stopping a step's process group.
#include "launcher/step_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "launcher/agent/exec_args.h"
#include "protocol/token.h"
#include "protocol/unique_fd.h"

extern char** environ;

namespace scimesh::launcher {
namespace {

ExitInfo FromWaitStatus(int status) {
  ExitInfo e;
  if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.code = WTERMSIG(status);
  } else {
    e.code = WEXITSTATUS(status);
  }
  return e;
}

// The PUs of `pin` this process may run on; nullopt when none (or no pin).
std::optional<cpu_set_t> PinMask(const std::vector<int>& pin) {
  if (pin.empty()) return std::nullopt;
  cpu_set_t allowed, want;
  CPU_ZERO(&want);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::nullopt;
  for (int cpu : pin) {
    if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &allowed)) CPU_SET(cpu, &want);
  }
  if (CPU_COUNT(&want) == 0) return std::nullopt;
  return want;
}

}  // namespace

std::string ExitInfo::Describe() const {
  if (!signaled) return "exit status " + std::to_string(code);
  const char* name = strsignal(code);
  return "killed by signal " + std::to_string(code) + " (" + (name != nullptr ? name : "unknown") + ")";
}

namespace {

// posix_spawn's attributes and file actions, released on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    ok_ = ::posix_spawnattr_init(&attr_) == 0;
    ok_ = ::posix_spawn_file_actions_init(&actions_) == 0 && ok_;
  }
  ~SpawnSetup() {
    ::posix_spawnattr_destroy(&attr_);
    ::posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // A new process group; default handling of every signal, none blocked;
  // stdin /dev/null, stdout and stderr the given files; `cwd` (if any).
  bool Prepare(int out, int err, const std::string& cwd) {
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    return ok_ && ::posix_spawnattr_setflags(&attr_, flags) == 0 && ::posix_spawnattr_setpgroup(&attr_, 0) == 0 &&
           ::posix_spawnattr_setsigdefault(&attr_, &all) == 0 && ::posix_spawnattr_setsigmask(&attr_, &none) == 0 &&
           ::posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0) == 0 &&
           ::posix_spawn_file_actions_adddup2(&actions_, out, 1) == 0 &&
           ::posix_spawn_file_actions_adddup2(&actions_, err, 2) == 0 &&
           (cwd.empty() || ::posix_spawn_file_actions_addchdir_np(&actions_, cwd.c_str()) == 0);
  }
  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  bool ok_ = false;
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

// The calling thread bound to `pin` until destroyed: a spawned child
// inherits the binding before its program runs (threads it starts at once
// included).
class ThreadPin {
 public:
  explicit ThreadPin(const std::optional<cpu_set_t>& pin) {
    if (!pin || ::sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    active_ = ::sched_setaffinity(0, sizeof *pin, &*pin) == 0;
  }
  ~ThreadPin() {
    if (active_) (void)::sched_setaffinity(0, sizeof saved_, &saved_);
  }
  ThreadPin(const ThreadPin&) = delete;
  ThreadPin& operator=(const ThreadPin&) = delete;

 private:
  cpu_set_t saved_{};
  bool active_ = false;
};

}  // namespace

Result<StepProcess> StepProcess::Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return Status::InvalidArgument("no command to run");
  agent::ExecArgs exec(spec.argv, spec.env, [&spec](std::string_view name) {
    return spec.keyless && IsTokenVariable(name);
  });
  UniqueFd out(::open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  UniqueFd err(::open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out.valid() || !err.valid()) return Status::Io("cannot create the step's log files in its attempt directory");
  SpawnSetup setup;
  if (!setup.Prepare(out.get(), err.get(), spec.cwd)) return Status::Internal("cannot prepare posix_spawn");
  // posix_spawn, not fork: glibc's shares this process's memory until the
  // exec (vfork), where fork copied the page tables of a large threaded
  // process and made every thread pay copy-on-write faults afterwards (most
  // of the launcher's CPU with many short steps). Errors of the chdir and of
  // the exec come back as its result.
  pid_t pid = -1;
  int rc = 0;
  {
    ThreadPin pinned(PinMask(spec.pin));
    rc = ::posix_spawnp(&pid, exec.argv()[0], setup.actions(), setup.attr(), exec.argv(), exec.envp());
  }
  if (rc != 0) {
    const std::string program = spec.argv[0].substr(spec.argv[0].rfind('/') + 1);
    if (rc == EAGAIN || rc == ENOMEM) return Status::Unavailable("cannot start '" + program + "': " + strerror(rc));
    return Status::NotFound("cannot start '" + program + "': " + strerror(rc));
  }
  return StepProcess(pid);
}

StepProcess::StepProcess(pid_t pid) : pid_(pid) {
  // Linux >= 5.3; without it WaitFor falls back to polling.
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

StepProcess::StepProcess(StepProcess&& other) noexcept
    : pid_(other.pid_), pidfd_(other.pidfd_), exit_(other.exit_) {
  other.pid_ = -1;
  other.pidfd_ = -1;
}

StepProcess::~StepProcess() {
  if (pid_ > 0 && !exit_) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (pidfd_ >= 0) ::close(pidfd_);
}

std::optional<ExitInfo> StepProcess::Poll() {
  if (exit_ || pid_ <= 0) return exit_;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) exit_ = FromWaitStatus(status);
  return exit_;
}

std::optional<ExitInfo> StepProcess::WaitFor(std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (!Poll()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) break;
    if (pidfd_ >= 0) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
      pollfd p{pidfd_, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 60000)));  // EINTR: Poll() again
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return exit_;
}

void StepProcess::Signal(int sig) {
  if (pid_ > 0 && !exit_) ::kill(-pid_, sig);
}

ExitInfo StepProcess::Stop(std::chrono::milliseconds grace) {
  Signal(SIGTERM);
  if (auto e = WaitFor(grace)) return *e;
  Signal(SIGKILL);
  while (!Poll()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return *exit_;
}

}  // namespace scimesh::launcher
