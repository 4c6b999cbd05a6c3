// The watcher thread: poll the lease state, judge, cancel the step.
#include "plugin/lease_watch.h"

#include <dlfcn.h>
#include <signal.h>
#include <time.h>

#include "plugin/lease_judge.h"
#include "plugin/quiet_thread.h"
#include "plugin/spank_log.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/attempt/lease_state.h"

namespace scimesh::spank {

struct LeaseWatch::Shared {
  Shared(WatchSpec s, UniqueFd d, StepSignaller sig) : spec(std::move(s)), dir(std::move(d)), signal(std::move(sig)) {}

  const WatchSpec spec;
  const UniqueFd dir;
  const StepSignaller signal;

  mutable std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  bool finished = false;
  std::string why;
  std::atomic<bool> cancelled{false};
  std::atomic<int64_t> cancel_sent_ms{0};
};

namespace {

using Shared = LeaseWatch::Shared;

int64_t NowMonoMs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Waits up to `d` unless stopping; true when stop was asked.
bool WaitStop(Shared& s, std::chrono::milliseconds d) {
  std::unique_lock lock(s.mu);
  return s.cv.wait_for(lock, d, [&s] { return s.stop; });
}

bool Stopping(Shared& s) {
  std::lock_guard lock(s.mu);
  return s.stop;
}

// Sends `signal`, retrying failures while not asked to stop.
bool SendWithRetries(Shared& s, int signal) {
  for (int i = 1; i <= s.spec.signal_tries; ++i) {
    Status st = s.signal(signal);
    if (st.ok()) {
      int64_t zero = 0;
      s.cancel_sent_ms.compare_exchange_strong(zero, NowMonoMs());
      return true;
    }
    LogError("cannot signal the step (try " + std::to_string(i) + "/" + std::to_string(s.spec.signal_tries) +
             "): " + st.message());
    if (i < s.spec.signal_tries && WaitStop(s, s.spec.signal_retry_delay)) return false;
  }
  return false;
}

void Decided(Shared& s, const std::string& why) {
  {
    std::lock_guard lock(s.mu);
    s.why = why;
  }
  s.cancelled = true;
}

// SIGTERM, then SIGKILL after `grace` (at once without one).
void Terminate(Shared& s, std::chrono::milliseconds grace) {
  if (grace.count() > 0) {
    SendWithRetries(s, SIGTERM);
    // The grace period ends early when the step ends on its own (Stop), but
    // tasks on other nodes may still ignore SIGTERM: SIGKILL them either way
    // (once; retried only while not stopping).
    WaitStop(s, grace);
  }
  SendWithRetries(s, SIGKILL);
}

// Fencing: another attempt may run, so this one is signalled now.
void CancelStep(Shared& s, const std::string& why) {
  Decided(s, why);
  LogError("cancelling the step of lease " + s.spec.lease_id + ": " + why);
  Terminate(s, s.spec.grace);
}

// The run's owner cancelled it: its ranks see cancelled() and get the
// owner-cancel grace to stop on their own; a step that ends within it
// (Stop) gets no signal at all.
void EndWithinGrace(Shared& s, const std::string& why) {
  Decided(s, why);
  const std::string grace_ms = std::to_string(s.spec.owner_cancel_grace.count());
  LogInfo("lease " + s.spec.lease_id + ": its run was cancelled (" + why + "); the step gets " + grace_ms +
          " ms to end on its own before SIGTERM");
  if (WaitStop(s, s.spec.owner_cancel_grace)) {
    LogInfo("the step of lease " + s.spec.lease_id + " ended on its own within its grace");
    return;
  }
  LogError("cancelling the step of lease " + s.spec.lease_id + ": still running " + grace_ms +
           " ms after its run was cancelled");
  Terminate(s, s.spec.owner_cancel_grace);
}

void Run(const std::shared_ptr<Shared>& shared) {
  Shared& s = *shared;
  try {
    LeaseJudge judge(s.spec.lease_id, s.spec.attempt, s.spec.host, s.spec.lease_ttl_ms, NowMonoMs());
    while (!Stopping(s)) {
      auto text = ReadOwnedFileAt(s.dir.get(), kLeaseStateFileName, s.spec.owner, kMaxStateFileBytes, false,
                                  kLeaseStateFileName);
      Result<LeaseState> state = text.ok() ? ParseLeaseState(text.value()) : Result<LeaseState>(text.status());
      Judgement j = judge.Observe(state, NowMonoMs());
      if (j.action == Judgement::Action::kCancel) {
        CancelStep(s, j.why);
        break;
      }
      if (j.action == Judgement::Action::kEndWithinGrace) {
        EndWithinGrace(s, j.why);
        break;
      }
      if (j.action == Judgement::Action::kStopWatching) {
        LogDebug("stopped watching lease " + s.spec.lease_id + ": " + j.why);
        break;
      }
      if (WaitStop(s, s.spec.poll)) break;
    }
  } catch (const std::exception& e) {
    LogError(std::string("the lease watcher failed: ") + e.what());
  } catch (...) {
    LogError("the lease watcher failed");
  }
  std::lock_guard lock(s.mu);
  s.finished = true;
  s.cv.notify_all();
}

}  // namespace

LeaseWatch::LeaseWatch(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

Result<std::unique_ptr<LeaseWatch>> LeaseWatch::Start(WatchSpec spec, UniqueFd attempt_dir, StepSignaller signal) {
  auto shared = std::make_shared<Shared>(std::move(spec), std::move(attempt_dir), std::move(signal));
  std::unique_ptr<LeaseWatch> w(new LeaseWatch(shared));
  // The thread holds its own reference: the state outlives this object.
  auto thread = StartQuietThread([shared] { Run(shared); });
  if (!thread.ok()) return Status::Internal("the watcher: " + thread.status().message());
  w->thread_ = std::move(*thread);
  return w;
}

LeaseWatch::~LeaseWatch() { Stop(std::chrono::seconds(1)); }

bool LeaseWatch::Stop(std::chrono::milliseconds deadline) {
  if (!thread_.joinable()) return true;
  std::unique_lock lock(shared_->mu);
  shared_->stop = true;
  shared_->cv.notify_all();
  const bool ended = shared_->cv.wait_for(lock, deadline, [this] { return shared_->finished; });
  lock.unlock();
  if (ended) {
    thread_.join();
  } else {
    LogError("the lease watcher is still signalling the step (slurmctld slow); leaving it to end on its own");
    PinThisModule();
    thread_.detach();
  }
  return ended;
}

bool LeaseWatch::cancelled() const { return shared_->cancelled.load(); }

std::string LeaseWatch::why() const {
  std::lock_guard lock(shared_->mu);
  return shared_->why;
}

int64_t LeaseWatch::cancel_sent_ms() const { return shared_->cancel_sent_ms.load(); }

void PinThisModule() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&PinThisModule), &info) == 0 || info.dli_fname == nullptr) {
    LogError("cannot find the plugin's own module to keep it loaded");
    return;
  }
  // A reference never released: with RTLD_NODELETE the module stays mapped.
  if (::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == nullptr) {
    LogError("cannot keep the plugin loaded for a thread still running");
  }
}

}  // namespace scimesh::spank
