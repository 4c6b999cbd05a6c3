// The agent's epoll loop: commands in, events out, steps stopped on the way out.
#include "launcher/agent/agent_loop.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "launcher/agent/agent_wire.h"
#include "launcher/agent/line_splitter.h"
#include "launcher/agent/memory_cgroup.h"
#include "launcher/agent/step_spawn.h"
#include "protocol/util/child_process.h"
#include "protocol/util/host_name.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::agent {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxSteps = 4096;

struct Step {
  pid_t pid = -1;
  UniqueFd pidfd;
  std::optional<Clock::time_point> kill_at;  // SIGKILL to the group then (stop, shutdown)
  std::optional<MemoryCgroup> memory_at_start;  // the OOM killer's count when it started
};

class Loop {
 public:
  Loop(const AgentOptions& options, Keeper& keeper) : options_(options), keeper_(keeper) {}
  int Run();

 private:
  bool Watch(int fd);
  void Emit(const AgentEvent& event);
  void Error(std::string id, std::string message);
  void OnInput(int fd);
  void OnLine(const LineSplitter::Line& line);
  void OnStart(const AgentStart& start);
  void OnSignal();
  void OnExit(int pidfd);
  void Shutdown(int exit_code);
  void KillDue();
  int TimeoutMs() const;

  const AgentOptions& options_;
  Keeper& keeper_;
  UniqueFd epoll_, signals_;
  LineSplitter lines_, direct_lines_;
  std::map<std::string, Step> steps_;
  std::map<int, std::string> by_pidfd_;
  bool stopping_ = false, out_broken_ = false;
  int exit_code_ = 0;
};

bool Loop::Watch(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
}

void Loop::Emit(const AgentEvent& event) {
  if (out_broken_) return;
  const std::string line = AgentEventLine(event);
  // Blocking writes: a launcher that stops reading stalls the agent (see
  // docs/agent.md); a launcher that is gone (EPIPE) ends it.
  for (size_t done = 0; done < line.size();) {
    ssize_t n = ::write(options_.out_fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      out_broken_ = true;
      Shutdown(0);
      return;
    }
    done += static_cast<size_t>(n);
  }
}

void Loop::Error(std::string id, std::string message) {
  AgentEvent e;
  e.kind = AgentEvent::Kind::kError;
  e.id = std::move(id);
  e.error = std::move(message);
  Emit(e);
}

void Loop::OnInput(int fd) {
  char buf[65536];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    Shutdown(0);  // the launcher (or its srun) is gone
    return;
  }
  LineSplitter& lines = fd == options_.in_fd ? lines_ : direct_lines_;
  for (const auto& line : lines.Push(std::string_view(buf, static_cast<size_t>(n)))) {
    if (stopping_) return;
    OnLine(line);
  }
}

void Loop::OnLine(const LineSplitter::Line& line) {
  if (line.oversize) return Error("", "command line longer than " + std::to_string(kMaxLineBytes) + " bytes");
  if (line.text.empty()) return;
  auto command = ParseAgentCommand(line.text);
  if (!command.ok()) return Error("", command.status().message());
  if (const auto* start = std::get_if<AgentStart>(&*command)) return OnStart(*start);
  if (std::holds_alternative<AgentPing>(*command)) {
    AgentEvent pong;
    pong.kind = AgentEvent::Kind::kPong;
    return Emit(pong);
  }
  const std::string& id =
      std::holds_alternative<AgentSignal>(*command) ? std::get<AgentSignal>(*command).id : std::get<AgentStop>(*command).id;
  auto it = steps_.find(id);
  if (it == steps_.end()) return Error(id, "no running step with this id");
  Step& step = it->second;
  if (const auto* sig = std::get_if<AgentSignal>(&*command)) {
    ::kill(-step.pid, sig->signal);
    return;
  }
  ::kill(-step.pid, SIGTERM);
  const auto at = Clock::now() + std::chrono::milliseconds(std::get<AgentStop>(*command).grace_ms);
  if (!step.kill_at || at < *step.kill_at) step.kill_at = at;
}

void Loop::OnStart(const AgentStart& start) {
  AgentEvent e;
  e.id = start.id;
  e.kind = AgentEvent::Kind::kFailed;
  if (steps_.count(start.id) != 0) {
    e.error = "a step with this id is running";
  } else if (steps_.size() >= kMaxSteps) {
    e.error = "too many steps running (" + std::to_string(kMaxSteps) + ")";
  } else if (auto spawned = SpawnStep(start, keeper_, options_.step_nofile ? &*options_.step_nofile : nullptr); !spawned.ok()) {
    e.error = spawned.status().message();
  } else {
    const int fd = spawned->pidfd.get();
    if (!Watch(fd)) {
      // Unwatchable: its exit would never be seen, so it must not run.
      KillGroupAndReap(spawned->pid);
      keeper_.Forget(spawned->pid);
      e.error = std::string("epoll: ") + std::strerror(errno);
    } else {
      e.kind = AgentEvent::Kind::kStarted;
      e.pid = spawned->pid;
      by_pidfd_[fd] = start.id;
      steps_[start.id] = Step{spawned->pid, std::move(spawned->pidfd), std::nullopt, ReadOwnMemoryCgroup()};
    }
  }
  Emit(e);
}

void Loop::OnSignal() {
  signalfd_siginfo info{};
  if (::read(signals_.get(), &info, sizeof info) != static_cast<ssize_t>(sizeof info)) return;
  if (stopping_) {
    // A second signal: no more grace.
    for (auto& [id, step] : steps_) step.kill_at = Clock::now();
    return;
  }
  Shutdown(128 + static_cast<int>(info.ssi_signo));
}

void Loop::OnExit(int pidfd) {
  auto name = by_pidfd_.find(pidfd);
  if (name == by_pidfd_.end()) return;
  auto it = steps_.find(name->second);
  Step& step = it->second;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(step.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) {
    return;  // not exited after all: never sweep a live step's group
  }
  // The leader is a zombie until reaped, so its pid -- the group's id --
  // cannot have been reused: sweep what it left in its group now, as a SLURM
  // step's end does.
  ::kill(-step.pid, SIGKILL);
  const ChildExit exit = WaitChild(step.pid).value_or(ChildExit{true, SIGKILL});
  keeper_.Forget(step.pid);
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, pidfd, nullptr);
  AgentEvent e;
  e.kind = AgentEvent::Kind::kExited;
  e.id = it->first;
  e.pid = step.pid;
  e.signaled = exit.signaled;
  e.code = exit.code;
  // The step shares this agent's memory cgroup (its job step's on the node).
  e.memory_limit_mib = MemoryLimitKillMib(step.memory_at_start, ReadOwnMemoryCgroup(), e.signaled, e.code);
  by_pidfd_.erase(name);
  steps_.erase(it);
  Emit(e);
}

void Loop::Shutdown(int exit_code) {
  if (stopping_) return;
  stopping_ = true;
  exit_code_ = exit_code;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, options_.in_fd, nullptr);
  if (options_.direct_fd >= 0) ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, options_.direct_fd, nullptr);
  const auto at = Clock::now() + options_.kill_grace;
  for (auto& [id, step] : steps_) {
    ::kill(-step.pid, SIGTERM);
    if (!step.kill_at || at < *step.kill_at) step.kill_at = at;
  }
}

void Loop::KillDue() {
  const auto now = Clock::now();
  for (auto& [id, step] : steps_) {
    if (step.kill_at && *step.kill_at <= now) {
      ::kill(-step.pid, SIGKILL);
      step.kill_at.reset();
    }
  }
}

int Loop::TimeoutMs() const {
  std::optional<Clock::time_point> next;
  for (const auto& [id, step] : steps_) {
    if (step.kill_at && (!next || *step.kill_at < *next)) next = step.kill_at;
  }
  if (!next) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 60000));
}

int Loop::Run() {
  sigset_t mask;
  sigemptyset(&mask);
  // Blocked, these reach the signalfd even when the launcher left them
  // ignored (Linux never discards a blocked signal).
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&mask, sig);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  (void)::signal(SIGPIPE, SIG_IGN);
  signals_ = UniqueFd(::signalfd(-1, &mask, SFD_CLOEXEC));
  epoll_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
  if (!signals_.valid() || !epoll_.valid() || !Watch(signals_.get())) {
    (void)std::fprintf(stderr, "scimesh-agent: cannot set up its event loop: %s\n", std::strerror(errno));
    return 1;
  }
  if (!Watch(options_.in_fd)) {
    (void)std::fprintf(stderr, "scimesh-agent: stdin must be a pipe, socket or terminal: %s\n", std::strerror(errno));
    return 1;
  }
  if (options_.direct_fd >= 0 && !Watch(options_.direct_fd)) {
    (void)std::fprintf(stderr, "scimesh-agent: cannot watch the direct channel: %s\n", std::strerror(errno));
    return 1;
  }
  AgentEvent ready;
  ready.kind = AgentEvent::Kind::kReady;
  ready.host = HostName();
  ready.pid = ::getpid();
  ready.version = options_.version;
  Emit(ready);

  while (!(stopping_ && steps_.empty())) {
    epoll_event events[64];
    int n = ::epoll_wait(epoll_.get(), events, 64, TimeoutMs());
    if (n < 0 && errno != EINTR) {
      (void)std::fprintf(stderr, "scimesh-agent: epoll_wait: %s\n", std::strerror(errno));
      Shutdown(1);
      // Without the loop only the kill deadlines are left: wait them out.
      for (auto& [id, step] : steps_) ::kill(-step.pid, SIGKILL);
      return 1;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == options_.in_fd || fd == options_.direct_fd) {
        if (!stopping_) OnInput(fd);
      } else if (fd == signals_.get()) {
        OnSignal();
      } else {
        OnExit(fd);
      }
    }
    KillDue();
  }
  return exit_code_;
}

}  // namespace

int RunAgent(const AgentOptions& options, Keeper& keeper) {
  Loop loop(options, keeper);
  return loop.Run();
}

}  // namespace scimesh::agent
