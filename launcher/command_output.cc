// posix_spawn with both output pipes polled against a deadline.
#include "launcher/command_output.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace scimesh::launcher {
namespace {

// Closes a file descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  void Reset() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

}  // namespace

Result<std::string> CommandOutput(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  size_t max_bytes) {
  if (argv.empty()) return Status::InvalidArgument("command: empty argv");
  const std::string& program = argv[0];
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Status::Io(std::string("command: pipe: ") + std::strerror(errno));
  Fd out_r{out_pipe[0]}, out_w{out_pipe[1]};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return Status::Io(std::string("command: pipe: ") + std::strerror(errno));
  Fd err_r{err_pipe[0]}, err_w{err_pipe[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.fd, 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Status::Unavailable(program + ": cannot start: " + std::strerror(rc));
  out_w.Reset();
  err_w.Reset();

  std::string out, err;
  bool too_long = false, timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_r.fd, POLLIN, 0}, {err_r.fd, POLLIN, 0}};
    const int n = poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t got = read(fds[i].fd, buf, sizeof(buf));
      if (got <= 0) {
        (i == 0 ? out_r : err_r).Reset();
        continue;
      }
      std::string& sink = i == 0 ? out : err;
      // stderr is only for the first line of an error message.
      if (i == 1 && sink.size() > 4096) continue;
      sink.append(buf, static_cast<size_t>(got));
      if (i == 0 && out.size() > max_bytes) too_long = true;
    }
    if (too_long) break;
  }
  if (timed_out || too_long) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status::Timeout(program + ": no answer within " + std::to_string(timeout.count()) + " ms");
  }
  if (too_long) return Status::InvalidArgument(program + ": more than " + std::to_string(max_bytes) + " bytes of output");
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    std::string first = err.substr(0, err.find('\n')).substr(0, 200);
    std::string how = WIFEXITED(wstatus) ? "exited " + std::to_string(WEXITSTATUS(wstatus))
                                         : "killed by signal " + std::to_string(WTERMSIG(wstatus));
    // posix_spawnp reports a missing program as exit 127 from the child.
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 127 && first.empty()) how = "not found or cannot run";
    return Status::Unavailable(program + " " + how + (first.empty() ? "" : ": " + first));
  }
  return out;
}

}  // namespace scimesh::launcher
