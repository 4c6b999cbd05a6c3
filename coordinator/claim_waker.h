// ClaimWaker: how held long-poll claims learn that something may have become
// offerable (a run started, a step finished or was requeued, a backoff ended,
// a run ended). A generation counter plus a condition variable: a waiter
// notes the generation before it looks, and sleeps only if nothing was
// announced since. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace scimesh::coordinator {

class ClaimWaker {
 public:
  using Clock = std::chrono::steady_clock;

  uint64_t generation();
  // Something may be offerable: wakes every waiter.
  void Notify();
  // Sleeps until the generation moves past `seen`, `until` passes, or
  // Shutdown(). Returns false once shut down (stop holding claims).
  bool WaitFor(uint64_t seen, Clock::time_point until);
  // Releases every waiter now and for good (graceful shutdown).
  void Shutdown();
  bool shut_down();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t generation_ = 0;
  bool shut_down_ = false;
};

}  // namespace scimesh::coordinator
