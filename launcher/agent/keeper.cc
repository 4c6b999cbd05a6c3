// The keeper process: records process groups, kills them when its pipe ends.
#include "launcher/agent/keeper.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "protocol/util/child_process.h"

namespace scimesh::agent {
namespace {

// Signals aimed at the agent or its group that must not end the keeper.
constexpr int kIgnored[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2, SIGQUIT};

// The keeper's whole life. Runs in the forked child of a single-threaded
// agent, so allocating (std::set) is safe here.
[[noreturn]] void KeeperMain(int in) {
  // A group of its own: a signal to the agent's process group (a terminal's
  // Ctrl-C, a kill of the group) does not take the keeper with it; it lives
  // until the agent is gone and its own job is done.
  ::setpgid(0, 0);
  for (int sig : kIgnored) (void)::signal(sig, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Holding the agent's stdin/stdout would keep the launcher's channel open
  // after the agent died: keep nothing but the pipe.
  int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd <= 2; ++fd) {
    if (fd != in && null >= 0) ::dup2(null, fd);
  }
  if (in > 3) ::close_range(3, static_cast<unsigned>(in) - 1, 0);
  ::close_range(static_cast<unsigned>(in) + 1, ~0U, 0);
  ::prctl(PR_SET_NAME, "scimesh-keeper", 0, 0, 0);

  std::set<pid_t> groups;
  char buf[4096];
  size_t have = 0;
  for (;;) {
    ssize_t n = ::read(in, buf + have, sizeof buf - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the agent is gone (or the pipe broke)
    have += static_cast<size_t>(n);
    size_t used = 0;
    for (; have - used >= sizeof(int32_t); used += sizeof(int32_t)) {
      int32_t r;
      std::memcpy(&r, buf + used, sizeof r);
      if (r > 0) groups.insert(r);
      if (r < 0) groups.erase(-r);
    }
    std::memmove(buf, buf + used, have - used);
    have -= used;
  }
  for (pid_t g : groups) ::kill(-g, SIGKILL);
  ::_exit(0);
}

}  // namespace

Result<Keeper> Keeper::Start() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::Io(std::string("keeper pipe: ") + std::strerror(errno));
  // Blocked across fork: a signal that reaches the keeper before it ignores
  // it stays pending, then is discarded, instead of killing it.
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : kIgnored) sigaddset(&block, sig);
  ::sigprocmask(SIG_BLOCK, &block, &old);
  pid_t pid = ::fork();
  if (pid == 0) KeeperMain(fds[0]);
  const int fork_errno = errno;
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return Status::Unavailable(std::string("keeper fork: ") + std::strerror(fork_errno));
  }
  return Keeper(pid, UniqueFd(fds[1]));
}

Keeper::Keeper(Keeper&& other) noexcept : pid_(other.pid_), pipe_(std::move(other.pipe_)) { other.pid_ = -1; }

Keeper::~Keeper() {
  pipe_.Reset();
  if (pid_ > 0) (void)WaitChild(pid_);
}

bool Keeper::Send(int32_t record) {
  if (!pipe_.valid()) return false;
  ssize_t n;
  do {
    n = ::write(pipe_.get(), &record, sizeof record);  // atomic: 4 bytes < PIPE_BUF
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof record);
}

bool Keeper::Track(pid_t pgid) { return Send(static_cast<int32_t>(pgid)); }
bool Keeper::Forget(pid_t pgid) { return Send(-static_cast<int32_t>(pgid)); }

}  // namespace scimesh::agent
