// The watcher thread: poll the lease state, judge, cancel the step.
#include "plugin/lease_watch.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "plugin/lease_judge.h"
#include "plugin/spank_log.h"
#include "protocol/lease_state.h"

namespace scimesh::spank {
namespace {

constexpr size_t kMaxStateBytes = 64 * 1024;

int64_t NowMonoMs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

LeaseWatch::LeaseWatch(WatchSpec spec, UniqueFd dir, StepSignaller signal)
    : spec_(std::move(spec)), dir_(std::move(dir)), signal_(std::move(signal)) {}

Result<std::unique_ptr<LeaseWatch>> LeaseWatch::Start(WatchSpec spec, UniqueFd attempt_dir, StepSignaller signal) {
  std::unique_ptr<LeaseWatch> w(new LeaseWatch(std::move(spec), std::move(attempt_dir), std::move(signal)));
  // The thread inherits the mask: block everything while creating it, so no
  // signal meant for slurmstepd is ever delivered to the watcher.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    w->thread_ = std::thread([raw = w.get()] { raw->Run(); });
  } catch (const std::exception& e) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return Status::Internal(std::string("cannot start the watcher thread: ") + e.what());
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return w;
}

LeaseWatch::~LeaseWatch() { Stop(std::chrono::seconds(15)); }

bool LeaseWatch::Stop(std::chrono::milliseconds deadline) {
  if (!thread_.joinable()) return true;
  std::unique_lock lock(mu_);
  stop_ = true;
  cv_.notify_all();
  bool ended = cv_.wait_for(lock, deadline, [this] { return finished_; });
  lock.unlock();
  if (ended) {
    thread_.join();
  } else {
    LogError("the lease watcher did not stop in time; leaving it to end on its own");
    thread_.detach();
  }
  return ended;
}

std::string LeaseWatch::why() const {
  std::lock_guard lock(mu_);
  return why_;
}

bool LeaseWatch::WaitStop(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, d, [this] { return stop_; });
}

bool LeaseWatch::SendWithRetries(int signal) {
  for (int i = 1; i <= spec_.signal_tries; ++i) {
    Status s = signal_(signal);
    if (s.ok()) {
      int64_t zero = 0;
      cancel_sent_ms_.compare_exchange_strong(zero, NowMonoMs());
      return true;
    }
    LogError("cannot signal the step (try " + std::to_string(i) + "/" + std::to_string(spec_.signal_tries) +
             "): " + s.message());
    if (i < spec_.signal_tries && WaitStop(spec_.signal_retry_delay) && signal != SIGKILL) return false;
  }
  return false;
}

void LeaseWatch::CancelStep(const std::string& why) {
  {
    std::lock_guard lock(mu_);
    why_ = why;
  }
  cancelled_ = true;
  LogError("cancelling the step of lease " + spec_.lease_id + ": " + why);
  if (spec_.grace.count() > 0) {
    SendWithRetries(SIGTERM);
    // The grace period ends early when the step ends on its own (Stop), but
    // tasks on other nodes may still ignore SIGTERM: SIGKILL them either way.
    WaitStop(spec_.grace);
  }
  SendWithRetries(SIGKILL);
}

void LeaseWatch::Run() {
  try {
    LeaseJudge judge(spec_.lease_id, spec_.attempt, spec_.host, spec_.lease_ttl_ms, NowMonoMs());
    for (;;) {
      auto text = ReadOwnedFileAt(dir_.get(), "lease.state", spec_.owner, kMaxStateBytes, false, "lease.state");
      Result<LeaseState> state = text.ok() ? ParseLeaseState(text.value()) : Result<LeaseState>(text.status());
      Judgement j = judge.Observe(state, NowMonoMs());
      if (j.action == Judgement::Action::kCancel) {
        CancelStep(j.why);
        break;
      }
      if (j.action == Judgement::Action::kStopWatching) {
        LogDebug("stopped watching lease " + spec_.lease_id + ": " + j.why);
        break;
      }
      if (WaitStop(spec_.poll)) break;
    }
  } catch (const std::exception& e) {
    LogError(std::string("the lease watcher failed: ") + e.what());
  } catch (...) {
    LogError("the lease watcher failed");
  }
  std::lock_guard lock(mu_);
  finished_ = true;
  cv_.notify_all();
}

}  // namespace scimesh::spank
