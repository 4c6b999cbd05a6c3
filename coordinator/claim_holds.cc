// Held long-poll claims: announcements, the waiting thread and the hand-back
// to the queue.
#include "coordinator/claim_holds.h"

#include <algorithm>
#include <vector>

namespace scimesh::coordinator {
namespace {
// A held claim looks again at least this often without an announcement. The
// Ledger announces every change that can make work offerable, so this is a
// safety net only; with thousands of held claims a shorter period would cost
// a claim query per claim each time.
constexpr auto kRecheck = std::chrono::seconds(5);
}  // namespace

ClaimHolds::ClaimHolds(WorkQueue& queue, const Clock& clock) : queue_(queue), clock_(clock) {}

ClaimHolds::~ClaimHolds() { Stop(); }

void ClaimHolds::Start() {
  // A clock that jumps wakes the loop to look at the deadlines again.
  watch_ = clock_.Watch([this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      dirty_ = true;
    }
    wake_.notify_all();
  });
  thread_ = std::thread([this] { Loop(); });
}

void ClaimHolds::Stop() {
  std::list<Held> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    left.swap(held_);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (watch_ != 0) clock_.Unwatch(watch_);
  watch_ = 0;
  for (Held& h : left) h.recheck(true);
}

void ClaimHolds::WorkAvailable() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    dirty_ = true;
    announced_ = clock_.Now();
  }
  wake_.notify_all();
}

size_t ClaimHolds::held() {
  std::lock_guard<std::mutex> lock(mu_);
  return held_.size();
}

void ClaimHolds::Poll(MonoTime until, Recheck recheck) { Look(until, recheck); }

bool ClaimHolds::Look(MonoTime until, Recheck& recheck) {
  uint64_t seen = 0;
  bool stopped = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    seen = generation_;
    stopped = stopped_;
  }
  if (recheck(stopped)) return true;
  std::unique_lock<std::mutex> lock(mu_);
  if (stopped_) {
    lock.unlock();
    recheck(true);
    return true;
  }
  const auto recheck_at = std::min(until, clock_.Now() + kRecheck);
  held_.push_back(Held{seen, until, recheck_at, std::move(recheck)});
  // Wake the loop if it sleeps past this claim's time, or if an
  // announcement came while the claim looked.
  if (recheck_at < next_look_ || seen != generation_) {
    dirty_ = true;
    lock.unlock();
    wake_.notify_all();
  }
  return false;
}

void ClaimHolds::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopped_) {
    dirty_ = false;
    const auto now = clock_.Now();
    auto next = now + kRecheck;
    std::vector<std::pair<Held, bool>> due;  // and whether an announcement woke it
    for (auto it = held_.begin(); it != held_.end();) {
      const bool woken = it->seen != generation_;
      if (woken || now >= it->recheck_at) {
        due.emplace_back(std::move(*it), woken);
        it = held_.erase(it);
      } else {
        next = std::min(next, it->recheck_at);
        ++it;
      }
    }
    next_look_ = next;
    const auto announced = announced_;
    lock.unlock();
    for (auto& [h, woken] : due) {
      queue_.Push(WorkQueue::Lane::kClaims, [this, h = std::move(h), woken = woken, announced]() mutable {
        if (Look(h.until, h.recheck) && woken && on_wake_) {
          on_wake_(std::chrono::duration<double>(clock_.Now() - announced).count());
        }
      });
    }
    lock.lock();
    wake_.wait_for(lock, next - clock_.Now(), [this] { return stopped_ || dirty_; });
  }
}

}  // namespace scimesh::coordinator
