// ClaimHolds: long-poll claims that found nothing, held without a thread,
// and how they learn that something may have become offerable (a run
// started, a step finished or was requeued, a backoff ended, a run ended).
// Each held claim is a recheck function plus a deadline; one thread hands a
// claim back to the WorkQueue's claim lane when work may be available
// (WorkAvailable()), when its deadline passes, or every 5 s as a safety net.
// A claim notes the generation of announcements before it looks, so an
// announcement made while it looks is never missed. Deadlines are points on
// an injected clock (protocol/util/clock.h; a ManualClock in tests, whose
// Advance wakes the thread). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

#include "coordinator/work_queue.h"
#include "protocol/util/clock.h"

namespace scimesh::coordinator {

class ClaimHolds {
 public:
  // Looks for work once; `shutting_down`: it must answer now. Returns true
  // once it has answered (the front end then resumes the connection).
  using Recheck = std::function<bool(bool shutting_down)>;

  // Borrows `queue` and `clock`, which must outlive this object.
  explicit ClaimHolds(WorkQueue& queue, const Clock& clock = SteadyClock());
  ~ClaimHolds();  // Stop()s
  ClaimHolds(const ClaimHolds&) = delete;
  ClaimHolds& operator=(const ClaimHolds&) = delete;

  void Start();
  // Answers every held claim (shutting down) and stops holding new ones: a
  // claim polled after this is answered at once.
  void Stop();

  // Something may be offerable: every held claim looks again.
  void WorkAvailable();
  // Runs `recheck` now on the calling thread and holds it if it did not
  // answer, until it answers or `until`.
  void Poll(MonoTime until, Recheck recheck);
  size_t held();
  // Called with the seconds from an announcement to the answer of a held
  // claim it woke (metrics). Set before Start().
  void OnWake(std::function<void(double seconds)> observer) { on_wake_ = std::move(observer); }

 private:
  struct Held {
    uint64_t seen;  // the generation before the last look
    MonoTime until;
    MonoTime recheck_at;
    Recheck recheck;
  };
  void Loop();
  // Poll(); true when it answered.
  bool Look(MonoTime until, Recheck& recheck);

  WorkQueue& queue_;
  const Clock& clock_;
  int watch_ = 0;  // clock_.Watch id while started
  std::mutex mu_;
  std::condition_variable wake_;
  uint64_t generation_ = 0;
  bool dirty_ = false;  // the loop must look again before sleeping
  MonoTime announced_;  // the last WorkAvailable()
  std::function<void(double)> on_wake_;
  MonoTime next_look_ = MonoTime::max();
  bool stopped_ = false;
  std::list<Held> held_;
  std::thread thread_;
};

}  // namespace scimesh::coordinator
