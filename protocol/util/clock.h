// The monotonic clock that lease deadlines are measured on, injectable for tests.
//
// Deadlines never come from comparing wall clocks (docs/protocol.md "Client
// rules"): every lease deadline is a point on this clock. SteadyClock() is
// std::chrono::steady_clock, which is CLOCK_MONOTONIC on Linux, so its
// readings can be written to the lease state file for readers on the same host.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace scimesh {

using MonoTime = std::chrono::steady_clock::time_point;
using Millis = std::chrono::milliseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoTime Now() const = 0;  // thread-safe

  // Whoever sleeps until a point on this clock registers how to wake it:
  // a clock that jumps (ManualClock::Advance) calls every `wake` after each
  // jump; the steady clock never does (sleepers wake on their own timeouts).
  // Returns an id for Unwatch, which returns once no call of `wake` is
  // running. Thread-safe; `wake` must not call Watch or Unwatch.
  virtual int Watch(std::function<void()> wake) const {
    (void)wake;
    return 0;
  }
  virtual void Unwatch(int id) const { (void)id; }
};

// The process-wide steady clock. Never destroyed; thread-safe.
const Clock& SteadyClock();

// `clock`, or SteadyClock() for nullptr (an option left unset).
inline const Clock& ClockOr(const Clock* clock) { return clock != nullptr ? *clock : SteadyClock(); }

// A clock that moves only when told to; Advance wakes the watchers. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(MonoTime start = MonoTime(std::chrono::hours(1))) : now_(start.time_since_epoch().count()) {}
  MonoTime Now() const override { return MonoTime(MonoTime::duration(now_.load())); }
  void Advance(MonoTime::duration d);
  int Watch(std::function<void()> wake) const override;
  void Unwatch(int id) const override;

 private:
  std::atomic<MonoTime::duration::rep> now_;
  mutable std::mutex mu_;  // guards the watchers; held while they are called
  mutable std::map<int, std::function<void()>> watchers_;
  mutable int next_id_ = 1;
};

// Milliseconds since the clock's epoch: CLOCK_MONOTONIC ms for SteadyClock().
inline int64_t MonoMillis(MonoTime t) {
  return std::chrono::duration_cast<Millis>(t.time_since_epoch()).count();
}

}  // namespace scimesh
