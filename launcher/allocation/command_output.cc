// A helper command run with both output pipes polled against a deadline.
#include "launcher/allocation/command_output.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "protocol/util/child_process.h"
#include "protocol/util/token.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::launcher {
namespace {
constexpr size_t kMaxErrBytes = size_t{64} * 1024;
}  // namespace

Result<CommandRun> RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                              size_t max_bytes) {
  if (argv.empty()) return Status::InvalidArgument("command: empty argv");
  const std::string& program = argv[0];
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Status::Io(std::string("command: pipe: ") + std::strerror(errno));
  UniqueFd out_r(out_pipe[0]), out_w(out_pipe[1]);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return Status::Io(std::string("command: pipe: ") + std::strerror(errno));
  UniqueFd err_r(err_pipe[0]), err_w(err_pipe[1]);

  ChildSpec spec;
  spec.argv = argv;
  spec.unset = IsTokenVariable;  // sinfo, scontrol: no key
  spec.stdout_fd = out_w.get();
  spec.stderr_fd = err_w.get();
  spec.own_group = true;  // a deadline kills what the command started too
  auto pid = SpawnChild(spec);
  if (!pid.ok()) return Status::Unavailable(pid.status().message());
  out_w.Reset();
  err_w.Reset();

  CommandRun run;
  bool too_long = false, timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out_r.valid() || err_r.valid()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_r.get(), POLLIN, 0}, {err_r.get(), POLLIN, 0}};
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
      if (i == 1) {  // stderr is for error messages: the start is kept, the rest drained
        run.err.append(buf, std::min(static_cast<size_t>(got), kMaxErrBytes - std::min(run.err.size(), kMaxErrBytes)));
        continue;
      }
      run.out.append(buf, static_cast<size_t>(got));
      if (run.out.size() > max_bytes) too_long = true;
    }
    if (too_long) break;
  }
  if (timed_out || too_long) {
    KillGroupAndReap(*pid);
    if (timed_out) return Status::Timeout(program + ": no answer within " + std::to_string(timeout.count()) + " ms");
    return Status::InvalidArgument(program + ": more than " + std::to_string(max_bytes) + " bytes of output");
  }
  run.exit = WaitChild(*pid).value_or(ChildExit{true, SIGKILL});
  return run;
}

Result<std::string> CommandOutput(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  size_t max_bytes) {
  auto run = RunCommand(argv, timeout, max_bytes);
  if (!run.ok()) return run.status();
  const ChildExit exit = run->exit;
  if (exit.signaled || exit.code != 0) {
    const std::string& err = run->err;
    std::string first = err.substr(0, err.find('\n')).substr(0, 200);
    std::string how = exit.signaled ? "killed by signal " + std::to_string(exit.code) : "exited " + std::to_string(exit.code);
    if (!exit.signaled && exit.code == 127 && first.empty()) how = "not found or cannot run";
    return Status::Unavailable(argv[0] + " " + how + (first.empty() ? "" : ": " + first));
  }
  return std::move(run->out);
}

}  // namespace scimesh::launcher
