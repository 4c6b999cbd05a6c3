// The heartbeat loop: a thread that beats one lease by HeartbeatState's rules.
#include "protocol/runtime/heartbeat_loop.h"

#include "protocol/util/log.h"

namespace scimesh {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("heartbeat"); }

}  // namespace

HeartbeatLoop::HeartbeatLoop(Client& client, HeartbeatConfig config, std::shared_ptr<CancellationToken> token)
    : client_(client), st_(client.clock(), std::move(config), std::move(token)) {
  // A clock that jumps (a test's ManualClock) wakes the thread to look again.
  // Taking mu_ first means the thread is either before its look at the clock
  // or already waiting: the wake-up is never lost.
  watch_ = st_.clock.Watch([this] {
    { std::lock_guard<std::mutex> lock(mu_); }
    cv_.notify_all();
  });
}

HeartbeatLoop::~HeartbeatLoop() { Stop(); }

Status HeartbeatLoop::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || st_.stop) return Status::Internal("heartbeat loop started twice");
  st_.Write(LeaseHold::kHeld, std::nullopt);
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::exception& e) {
    return Status::Internal(std::string("cannot start the heartbeat thread: ") + e.what());
  }
  return Status::Ok();
}

void HeartbeatLoop::Extend(const LeaseExtension& extension) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    st_.Extend(extension);
  }
  cv_.notify_all();
}

void HeartbeatLoop::SetProgress(std::string progress_json) {
  std::lock_guard<std::mutex> lock(mu_);
  st_.progress = std::move(progress_json);
}

LeaseDeadline HeartbeatLoop::deadline() const {
  std::lock_guard<std::mutex> lock(mu_);
  return st_.deadline;
}

int64_t HeartbeatLoop::beats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return st_.beats;
}

void HeartbeatLoop::Pause() {
  std::lock_guard<std::mutex> lock(mu_);
  st_.paused = true;
}

void HeartbeatLoop::HoldAlone() {
  std::lock_guard<std::mutex> lock(mu_);
  st_.alone = true;
}

void HeartbeatLoop::Resume(std::optional<LeaseDeadline> deadline) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!st_.Resume(deadline)) return;
  }
  cv_.notify_all();
}

void HeartbeatLoop::Stop() {
  st_.clock.Unwatch(watch_);  // without mu_: a wake-up in progress takes it
  {
    std::lock_guard<std::mutex> lock(mu_);
    st_.stop = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    client_.Interrupt();  // a beat in flight ends now, not at its timeout
    thread_.join();
    client_.ClearInterrupt();
  }
}

void HeartbeatLoop::MarkDone() {
  std::lock_guard<std::mutex> lock(mu_);
  st_.MarkDone();
}

void HeartbeatLoop::MarkLost(CancelReason reason) {
  std::lock_guard<std::mutex> lock(mu_);
  st_.MarkLost(reason);
}

void HeartbeatLoop::Run() {
  try {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        for (;;) {
          if (st_.stop || st_.finished) return;
          if (st_.paused) {
            cv_.wait(lock);
            continue;
          }
          const MonoTime next = st_.NextBeat();
          const MonoTime now = st_.clock.Now();
          if (now >= next) {
            if (st_.Yield()) continue;
            break;
          }
          cv_.wait_for(lock, next - now);  // the clock's Watch wakes it when it jumps
        }
      }
      if (deadline().PassedAt(st_.clock.Now())) {
        MarkLost(CancelReason::kExpired);
        return;
      }
      Beat();
    }
  } catch (const std::exception& e) {
    // A thread entry point: nothing may escape. Without beats the lease will
    // expire; say so now rather than leave the body running blind.
    Log()->error("heartbeat {} stopped by an unexpected error: {}", st_.config.call.lease_id, e.what());
    MarkLost(CancelReason::kExpired);
  }
}

void HeartbeatLoop::Beat() {
  LeaseCall call;
  std::optional<std::string> progress;
  {
    std::lock_guard<std::mutex> lock(mu_);
    call = st_.TakeCall(&progress);
  }
  auto r = client_.Heartbeat(call, progress);
  std::lock_guard<std::mutex> lock(mu_);
  if (st_.stop) return;
  st_.BeatAnswered(r);
}

}  // namespace scimesh
