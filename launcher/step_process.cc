// Spawning and stopping a step's process group.
#include "launcher/step_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "launcher/agent/exec_args.h"

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

}  // namespace

std::string ExitInfo::Describe() const {
  if (!signaled) return "exit status " + std::to_string(code);
  const char* name = strsignal(code);
  return "killed by signal " + std::to_string(code) + " (" + (name != nullptr ? name : "unknown") + ")";
}

Result<StepProcess> StepProcess::Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return Status::InvalidArgument("no command to run");
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  agent::ExecArgs exec(spec.argv, spec.env);

  int out = ::open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  int err = ::open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0 || err < 0) {
    if (out >= 0) ::close(out);
    if (err >= 0) ::close(err);
    return Status::Io("cannot create the step's log files in its attempt directory");
  }
  // Reports exec failures to the parent through a close-on-exec pipe.
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    ::close(out);
    ::close(err);
    return Status::Io("pipe failed");
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out);
    ::close(err);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return Status::Unavailable(std::string("fork failed: ") + strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(out, 1);
    ::dup2(err, 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) {
      int e = errno;
      (void)!::write(pipefd[1], &e, sizeof e);
      ::_exit(127);
    }
    ::execvpe(exec.argv()[0], exec.argv(), exec.envp());
    int e = errno;
    (void)!::write(pipefd[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also in the parent: no race with an early Signal()
  ::close(out);
  ::close(err);
  ::close(pipefd[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(pipefd[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  ::close(pipefd[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::string program = spec.argv[0].substr(spec.argv[0].rfind('/') + 1);
    return Status::NotFound("cannot start '" + program + "': " + strerror(child_errno));
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
