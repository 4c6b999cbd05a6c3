// Generation-counted wakeups for long-poll claims.
#include "coordinator/claim_waker.h"

namespace scimesh::coordinator {

uint64_t ClaimWaker::generation() {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

void ClaimWaker::Notify() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
  }
  cv_.notify_all();
}

bool ClaimWaker::WaitFor(uint64_t seen, Clock::time_point until) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_until(lock, until, [&] { return shut_down_ || generation_ != seen; });
  return !shut_down_;
}

void ClaimWaker::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shut_down_ = true;
  }
  cv_.notify_all();
}

bool ClaimWaker::shut_down() {
  std::lock_guard<std::mutex> lock(mu_);
  return shut_down_;
}

}  // namespace scimesh::coordinator
