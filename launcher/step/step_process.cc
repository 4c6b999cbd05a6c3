// Spawning and stopping a step's process group.
#include "launcher/step/step_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "protocol/util/child_process.h"
#include "protocol/util/token.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::launcher {
namespace {

ExitInfo FromChildExit(const ChildExit& e) { return ExitInfo{e.signaled, e.code}; }

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

std::string ExitInfo::Describe() const { return ChildExit{signaled, code}.Describe(); }

Result<StepProcess> StepProcess::Spawn(const SpawnSpec& spec) {
  UniqueFd out(::open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  UniqueFd err(::open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out.valid() || !err.valid()) return Status::Io("cannot create the step's log files in its attempt directory");
  ChildSpec child;
  child.argv = spec.argv;
  child.env = spec.env;
  if (spec.keyless) child.unset = IsTokenVariable;
  child.stdout_fd = out.get();
  child.stderr_fd = err.get();
  child.cwd = spec.cwd;
  child.own_group = true;
  child.cpus = PinMask(spec.pin);
  auto pid = SpawnChild(child);
  if (!pid.ok()) return pid.status();
  return StepProcess(*pid);
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
  if (pid_ > 0 && !exit_) KillGroupAndReap(pid_);
  if (pidfd_ >= 0) ::close(pidfd_);
}

std::optional<ExitInfo> StepProcess::Poll() {
  if (exit_ || pid_ <= 0) return exit_;
  if (auto e = PollChild(pid_)) exit_ = FromChildExit(*e);
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
