// WallClock: where the coordinator's wall-clock time comes from (ms since the
// Unix epoch), for the times it stores and shows. The Ledger and the audit log
// take one; the sweeper and the artifact collector use the Ledger's. Tests
// drive time with a ManualClock instead of sleeping. Intervals that are never
// stored (the key ring's reload check, connection deadlines) are measured on
// protocol/clock.h's monotonic Clock instead. Implementations are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace scimesh::coordinator {

class WallClock {
 public:
  virtual ~WallClock() = default;
  // Now, in ms since the epoch.
  virtual int64_t NowMs() const = 0;
};

// The system clock (stored times must survive restarts, so not steady).
class SystemWallClock final : public WallClock {
 public:
  int64_t NowMs() const override;
};

// The shared SystemWallClock: the default wherever a WallClock is optional.
std::shared_ptr<const WallClock> DefaultWallClock();

// A clock that moves only when told to. For tests.
class ManualClock final : public WallClock {
 public:
  explicit ManualClock(int64_t start_ms = 1'800'000'000'000) : now_(start_ms) {}
  int64_t NowMs() const override { return now_.load(); }
  void Advance(int64_t ms) { now_.fetch_add(ms); }
  void Set(int64_t ms) { now_.store(ms); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace scimesh::coordinator
