// Leases moved between the work pool and the event loop.
#include "launcher/lease_engine.h"

#include <sys/inotify.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <iterator>
#include <optional>

#include "protocol/attempt/attempt_files.h"
#include "protocol/util/log.h"
#include "protocol/util/token.h"

namespace scimesh::launcher {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("launcher"); }

// `path` as a file name when it is one in `dir`, else unchanged.
std::string InDirectory(const std::string& path, const std::string& dir) {
  if (dir.empty() || path.size() <= dir.size() + 1 || path.compare(0, dir.size(), dir) != 0 || path[dir.size()] != '/') {
    return path;
  }
  const std::string name = path.substr(dir.size() + 1);
  return name.find('/') == std::string::npos ? name : path;
}

}  // namespace

struct LeaseJob {
  Lease lease;
  MonoTime claim_sent_at;
  const StepCommand* command = nullptr;
  StepLaunch launch;
  LeaseEngine::Done done;
  std::unique_ptr<LeaseSession> session;
  std::unique_ptr<LaunchedStep> step;
  std::optional<StepProcess> proc;  // forked here; or:
  std::string agent_node;           // forked by this node's agent
  std::unique_ptr<StepWatch> watch;  // the loop's thread only
  std::optional<WatchEnd> end;
  int wd = -1;                       // inotify watch of the attempt directory
  uint64_t exit_poll = 0;            // where pidfds are unavailable
  MonoTime body_t0;
};

Result<std::unique_ptr<LeaseEngine>> LeaseEngine::Create(EngineConfig config) {
  std::unique_ptr<LeaseEngine> engine(new LeaseEngine(std::move(config)));
  SCIMESH_RETURN_IF_ERROR(engine->Init());
  return engine;
}

Status LeaseEngine::Init() {
  config_.launch.preempt = &preempt_;
  auto pool = WorkPool::Create(config_.client, config_.threads);
  if (!pool.ok()) return pool.status();
  pool_ = std::move(*pool);
  auto hub = HeartbeatHub::Create(config_.client);
  if (!hub.ok()) return hub.status();
  hub_ = std::move(*hub);
  auto loop = EventLoop::Create();
  if (!loop.ok()) return loop.status();
  loop_ = std::move(*loop);
  inotify_ = UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_.valid()) {
    Log()->warn("inotify unavailable ({}): lease.state is polled", std::strerror(errno));
  } else {
    loop_->Post([this] { (void)loop_->Watch(inotify_.get(), [this] { OnInotify(); }); });
  }
  StartAgents();
  return Status::Ok();
}

void LeaseEngine::StartAgents() {
  if (config_.agent_nodes.empty()) return;
  NodeAgents::Hooks hooks;
  hooks.started = [this](const std::string& id) {
    auto it = on_agent_.find(id);
    if (it != on_agent_.end()) Watch(it->second);
  };
  hooks.failed = [this](const std::string& id, const std::string& error) { AgentFailed(id, error); };
  hooks.exited = [this](const std::string& id, const ExitInfo& exit) { AgentEnded(id, exit); };
  agents_ = std::make_unique<NodeAgents>(*loop_, std::move(hooks));
  loop_->Post([this] { agents_->Launch(config_.agent_nodes, config_.agent_argv); });
}

LeaseEngine::~LeaseEngine() {
  PreemptAll();
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return held_ == 0; });
  }
  if (agents_) {
    // On the loop's thread, which owns the channels: stdin closed, each
    // agent stops (it holds no step now) and exits.
    std::promise<void> closed;
    loop_->Post([this, &closed] {
      agents_->CloseAll(std::chrono::milliseconds(5000));
      agents_.reset();
      closed.set_value();
    });
    closed.get_future().wait();
  }
  loop_.reset();  // no job is left on it
  pool_.reset();
  hub_.reset();
}

size_t LeaseEngine::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

void LeaseEngine::PreemptAll() {
  if (preempt_.exchange(true)) return;
  loop_->Post([this] {
    for (auto& [key, job] : watched_) {
      if (job->watch) job->watch->Preempt();
    }
  });
}

void LeaseEngine::Submit(const Lease& lease, MonoTime claim_sent_at, const StepCommand* command,
                         Placement placement, Done done) {
  auto job = std::make_shared<LeaseJob>();
  job->lease = lease;
  job->claim_sent_at = claim_sent_at;
  job->command = command;
  job->launch = config_.launch;
  job->launch.command = command;
  job->launch.placement = std::move(placement);
  job->done = std::move(done);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++held_;
  }
  pool_->Submit([this, job](Client& client) { Prepare(job, client); });
}

void LeaseEngine::Prepare(const std::shared_ptr<LeaseJob>& job, Client& client) {
  job->session = std::make_unique<LeaseSession>(
      job->lease, job->claim_sent_at, config_.setup,
      [this](HeartbeatConfig hb, std::shared_ptr<CancellationToken> token) {
        return hub_->Add(std::move(hb), std::move(token));
      });
  if (!job->session->Begin(client, job->command != nullptr)) return Finished(job, job->session->report());
  job->body_t0 = std::chrono::steady_clock::now();
  job->step = std::make_unique<LaunchedStep>(job->session->context(), job->launch);
  const bool on_agent = OnAgent(*job);
  if (auto result = job->step->Prepare(on_agent)) return Conclude(job, client, *result);
  // Without the key no process of the step can take the lease over, and no
  // SPANK plugin watches a step forked outside srun.
  if (job->step->plan().keyless) job->session->context().HoldHeartbeatsAlone();
  if (on_agent) {
    job->agent_node = job->launch.placement.nodes.front().name;
    return loop_->Post([this, job] { StartOnAgent(job); });
  }
  auto proc = StepProcess::Spawn(job->step->spawn_spec());
  if (!proc.ok()) return Conclude(job, client, job->step->NotStarted(proc.status()));
  job->proc.emplace(std::move(*proc));
  Log()->info("lease {} (step {}, attempt {}): started on {}", job->lease.lease_id, job->lease.step_id,
              job->lease.attempt, DescribePlacement(job->launch.placement));
  loop_->Post([this, job] { Watch(job); });
}

bool LeaseEngine::OnAgent(const LeaseJob& job) const {
  // One rank on one node needs no PMI: its node's agent forks it.
  const Placement& p = job.launch.placement;
  return agents_ && p.nodes.size() == 1 && p.ranks.size() == 1 && agents_->Ready(p.nodes.front().name);
}

void LeaseEngine::StartOnAgent(const std::shared_ptr<LeaseJob>& job) {
  const SpawnSpec spec = job->step->spawn_spec();
  agent::AgentStart start;
  start.id = job->lease.lease_id;
  start.argv = spec.argv;
  // srun's task identity and PMI the agent removes by itself (kAgentStepUnset).
  if (spec.keyless) start.unset.assign(std::begin(kTokenVariables), std::end(kTokenVariables));
  start.env = spec.env;
  start.cwd = spec.cwd;
  // File names in cwd: a start line over 1,024 bytes costs ~40 ms in srun.
  start.stdout_path = InDirectory(spec.stdout_path, spec.cwd);
  start.stderr_path = InDirectory(spec.stderr_path, spec.cwd);
  start.cpus = job->launch.placement.nodes.front().cpus;
  on_agent_[start.id] = job;
  if (Status s = agents_->Start(job->agent_node, start); !s.ok()) {
    on_agent_.erase(start.id);
    pool_->Submit([this, job, s](Client& client) { Conclude(job, client, job->step->AgentGone(s.message())); });
    return;
  }
  Log()->info("lease {} (step {}, attempt {}): started on {} by its node agent", job->lease.lease_id,
              job->lease.step_id, job->lease.attempt, DescribePlacement(job->launch.placement));
}

void LeaseEngine::AgentEnded(const std::string& id, const ExitInfo& exit) {
  auto it = on_agent_.find(id);
  if (it == on_agent_.end()) return;
  std::shared_ptr<LeaseJob> job = it->second;
  on_agent_.erase(it);
  if (job->watch) return job->watch->OnExit(exit);
  // Its agent went away before it said `started`.
  pool_->Submit([this, job](Client& client) {
    Conclude(job, client, job->step->AgentGone("its node agent went away"));
  });
}

void LeaseEngine::AgentFailed(const std::string& id, const std::string& error) {
  auto it = on_agent_.find(id);
  if (it == on_agent_.end()) return;
  std::shared_ptr<LeaseJob> job = it->second;
  on_agent_.erase(it);
  pool_->Submit([this, job, error](Client& client) {
    Conclude(job, client, job->step->NotStarted(Status::Io(error)));
  });
}

void LeaseEngine::Watch(const std::shared_ptr<LeaseJob>& job) {
  WatchParams params = job->step->watch_params();
  if (!params.state_poll && inotify_.valid()) {
    // The directory we opened, not whatever its path names now.
    const std::string dir = "/proc/self/fd/" + std::to_string(params.dir_fd);
    job->wd = ::inotify_add_watch(inotify_.get(), dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR);
    if (job->wd >= 0) by_wd_[job->wd] = job;
  }
  if (job->wd < 0) params.state_poll = job->launch.poll;
  std::weak_ptr<LeaseJob> weak = job;
  job->watch = std::make_unique<StepWatch>(
      *loop_, std::move(params), [this, weak](int sig) {
        auto j = weak.lock();
        if (!j) return;
        if (j->proc) j->proc->Signal(sig);
        else if (agents_) agents_->Signal(j->agent_node, j->lease.lease_id, sig);
      },
      [this, weak](const WatchEnd& end) {
        if (auto j = weak.lock()) {
          j->end = end;
          // Not here: this runs inside the watch, which Ended() destroys.
          loop_->Post([this, j] { Ended(j); });
        }
      });
  watched_[job.get()] = job;
  if (job->proc) {
    const int pidfd = job->proc->pidfd();
    const bool on_pidfd = pidfd >= 0 && loop_->Watch(pidfd, [this, weak] { PollExit(weak, false); }).ok();
    if (!on_pidfd) PollExit(weak, true);
  }  // else its agent reports the exit
  job->session->context().cancellation().OnCancel([this, weak] {
    loop_->Post([weak] {
      if (auto j = weak.lock(); j && j->watch) j->watch->OnCancelled();
    });
  });
  job->watch->Begin();
  if (preempt_) job->watch->Preempt();
}

void LeaseEngine::PollExit(const std::weak_ptr<LeaseJob>& weak, bool again) {
  auto job = weak.lock();
  if (!job || !job->watch || !job->proc) return;
  job->exit_poll = 0;
  if (auto exit = job->proc->Poll()) return job->watch->OnExit(*exit);
  // No pidfd (Linux < 5.3): look again shortly.
  if (again) job->exit_poll = loop_->After(std::chrono::milliseconds(20), [this, weak] { PollExit(weak, true); });
}

void LeaseEngine::OnInotify() {
  alignas(inotify_event) char buf[16384];
  for (;;) {
    const ssize_t n = ::read(inotify_.get(), buf, sizeof buf);
    if (n <= 0) return;  // EAGAIN: all read
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      if (ev->len == 0 || std::strcmp(ev->name, kLeaseStateFileName) != 0) continue;
      auto it = by_wd_.find(ev->wd);
      if (it == by_wd_.end()) continue;
      if (auto job = it->second.lock(); job && job->watch) job->watch->OnStateChanged();
    }
  }
}

void LeaseEngine::Ended(const std::shared_ptr<LeaseJob>& job) {
  if (job->proc && job->proc->pidfd() >= 0) loop_->Unwatch(job->proc->pidfd());
  if (job->exit_poll != 0) loop_->Cancel(job->exit_poll);
  if (job->wd >= 0) {
    ::inotify_rm_watch(inotify_.get(), job->wd);
    by_wd_.erase(job->wd);
    job->wd = -1;
  }
  watched_.erase(job.get());
  job->watch.reset();
  const WatchEnd end = *job->end;
  pool_->Submit([this, job, end](Client& client) { Conclude(job, client, job->step->Conclude(end)); });
}

void LeaseEngine::Conclude(const std::shared_ptr<LeaseJob>& job, Client& client, const StepResult& result) {
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - job->body_t0).count();
  Finished(job, job->session->Finish(client, result, wall_s));
}

void LeaseEngine::Finished(const std::shared_ptr<LeaseJob>& job, LeaseReport report) {
  // By value: `report` may be the session's own, which is destroyed here.
  // The session first: its heartbeats stop before the caller hears of it.
  job->step.reset();
  job->session.reset();
  try {
    if (job->done) job->done(report);
  } catch (const std::exception& e) {
    Log()->error("lease {}: unexpected error: {}", job->lease.lease_id, e.what());
  }
  std::lock_guard<std::mutex> lock(mu_);
  --held_;
  idle_.notify_all();
}

}  // namespace scimesh::launcher
