// Leases moved between the work pool and the event loop.
#include "launcher/lease_engine.h"

#include <sys/inotify.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "protocol/log.h"

namespace scimesh::launcher {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("launcher"); }

constexpr char kLeaseStateName[] = "lease.state";

}  // namespace

struct LeaseJob {
  Lease lease;
  MonoTime claim_sent_at;
  const StepCommand* command = nullptr;
  StepLaunch launch;
  LeaseEngine::Done done;
  // Declared before the session: the session's heartbeat loop uses it.
  std::unique_ptr<Client> beat_client;
  std::unique_ptr<LeaseSession> session;
  std::unique_ptr<LaunchedStep> step;
  std::optional<StepProcess> proc;
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
  auto loop = EventLoop::Create();
  if (!loop.ok()) return loop.status();
  loop_ = std::move(*loop);
  inotify_ = UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_.valid()) {
    Log()->warn("inotify unavailable ({}): lease.state is polled", std::strerror(errno));
    return Status::Ok();
  }
  loop_->Post([this] { (void)loop_->Watch(inotify_.get(), [this] { OnInotify(); }); });
  return Status::Ok();
}

LeaseEngine::~LeaseEngine() {
  PreemptAll();
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return held_ == 0; });
  }
  loop_.reset();  // no job is left on it
  pool_.reset();
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
  auto beat_client = Client::Create(config_.client);
  if (!beat_client.ok()) {
    LeaseReport report;
    report.lease_id = job->lease.lease_id;
    report.detail = "cannot create a heartbeat client: " + beat_client.status().message();
    Log()->error("lease {}: {}; it will expire", job->lease.lease_id, report.detail);
    return Finished(job, report);
  }
  job->beat_client = std::move(*beat_client);
  Client* beats = job->beat_client.get();
  job->session = std::make_unique<LeaseSession>(
      job->lease, job->claim_sent_at, config_.setup,
      [beats](HeartbeatConfig hb, std::shared_ptr<CancellationToken> token) {
        return std::make_unique<HeartbeatLoop>(*beats, std::move(hb), std::move(token));
      });
  if (!job->session->Begin(client, job->command != nullptr)) return Finished(job, job->session->report());
  job->body_t0 = std::chrono::steady_clock::now();
  job->step = std::make_unique<LaunchedStep>(job->session->context(), job->launch);
  if (auto result = job->step->Prepare()) return Conclude(job, client, *result);
  auto proc = StepProcess::Spawn(job->step->spawn_spec());
  if (!proc.ok()) return Conclude(job, client, job->step->NotStarted(proc.status()));
  job->proc.emplace(std::move(*proc));
  Log()->info("lease {} (step {}, attempt {}): started on {}", job->lease.lease_id, job->lease.step_id,
              job->lease.attempt, DescribePlacement(job->launch.placement));
  loop_->Post([this, job] { Watch(job); });
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
      *loop_, std::move(params), [weak](int sig) {
        if (auto j = weak.lock(); j && j->proc) j->proc->Signal(sig);
      },
      [this, weak](const WatchEnd& end) {
        if (auto j = weak.lock()) {
          j->end = end;
          // Not here: this runs inside the watch, which Ended() destroys.
          loop_->Post([this, j] { Ended(j); });
        }
      });
  watched_[job.get()] = job;
  const int pidfd = job->proc->pidfd();
  const bool on_pidfd = pidfd >= 0 && loop_->Watch(pidfd, [this, weak] { PollExit(weak, false); }).ok();
  if (!on_pidfd) PollExit(weak, true);
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
  if (!job || !job->watch) return;
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
      if (ev->len == 0 || std::strcmp(ev->name, kLeaseStateName) != 0) continue;
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
  job->beat_client.reset();
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
