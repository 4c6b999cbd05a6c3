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

namespace scimesh {

using MonoTime = std::chrono::steady_clock::time_point;
using Millis = std::chrono::milliseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoTime Now() const = 0;  // thread-safe
};

// The process-wide steady clock. Never destroyed; thread-safe.
const Clock& SteadyClock();

// A clock that moves only when told to. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(MonoTime start = MonoTime(std::chrono::hours(1))) : now_(start.time_since_epoch().count()) {}
  MonoTime Now() const override { return MonoTime(MonoTime::duration(now_.load())); }
  void Advance(MonoTime::duration d) { now_ += d.count(); }

 private:
  std::atomic<MonoTime::duration::rep> now_;
};

// Milliseconds since the clock's epoch: CLOCK_MONOTONIC ms for SteadyClock().
inline int64_t MonoMillis(MonoTime t) {
  return std::chrono::duration_cast<Millis>(t.time_since_epoch()).count();
}

}  // namespace scimesh
