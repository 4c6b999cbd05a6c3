// CliProcess: SpawnChild with both output streams on a pipe, read with poll.
#include "cli_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "protocol/util/child_process.h"

namespace scimesh::coordinator::testing {

CliProcess::CliProcess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  ChildSpec spec;
  spec.argv = {SCIMESH_COORDINATOR_BIN};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  spec.stdout_fd = spec.stderr_fd = fds[1];
  auto pid = SpawnChild(spec);
  ::close(fds[1]);
  fd_ = fds[0];
  if (pid.ok()) pid_ = *pid;
}

CliProcess::~CliProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 500 && !PollChild(pid_); ++i) ::usleep(10000);
    ::kill(pid_, SIGKILL);
    (void)WaitChild(pid_);
  }
  if (fd_ >= 0) ::close(fd_);
}

bool CliProcess::ReadSome(int timeout_ms) {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  int n = ::poll(&p, 1, timeout_ms);
  if (n <= 0) return n == 0 || errno == EINTR;
  char buf[4096];
  ssize_t got = ::read(fd_, buf, sizeof buf);
  if (got <= 0) return got < 0 && errno == EINTR;
  output_.append(buf, static_cast<size_t>(got));
  return true;
}

bool CliProcess::AwaitOutput(const std::string& text, int timeout_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (output_.find(text) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !ReadSome(static_cast<int>(left.count()))) break;
  }
  return output_.find(text) != std::string::npos;
}

bool CliProcess::Running() const {
  if (pid_ <= 0) return false;
  siginfo_t info{};
  // WNOWAIT: look without reaping, so Wait() still gets the status.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;
  return info.si_pid == 0;
}

int CliProcess::Wait() {
  while (ReadSome(1000)) {
  }
  if (pid_ <= 0) return -1;
  const auto exit = WaitChild(pid_);
  pid_ = -1;
  return exit ? exit->ShellStatus() : -1;
}

}  // namespace scimesh::coordinator::testing
