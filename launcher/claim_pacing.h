// ClaimPacing: how long the claim loop pauses before its next claim, so that
// no answer -- an empty claim answered at once (a coordinator stopping), a
// refusal, an unreachable coordinator -- makes it claim in a tight loop.
// Not thread-safe: the claim loop's own state.
#pragma once

#include <string>

#include "protocol/util/clock.h"

namespace scimesh::launcher {

class ClaimPacing {
 public:
  static constexpr Millis kFirstEmptyPause{100};
  static constexpr Millis kMaxEmptyPause{5000};
  static constexpr Millis kFirstFailurePause{1000};
  static constexpr Millis kMaxFailurePause{30000};

  // A claim answered: `offered` leases after `held_for` of the `asked`
  // long-poll wait. Leases, or an empty answer that held the poll at least
  // half of `asked` (one second at least), claim again at once; an empty
  // answer sooner than that pauses 100 ms, doubling while it repeats, up to 5 s.
  Millis Answered(int offered, Millis held_for, Millis asked);

  // A claim that failed with `reason` (after the client's own retries):
  // pauses 1 s, doubling while failures repeat, up to 30 s. `*first` is set
  // when the reason differs from the previous failure's (say it once).
  Millis Failed(const std::string& reason, bool* first);

 private:
  Millis empty_pause_{0};
  Millis failure_pause_{0};
  std::string last_failure_;
};

}  // namespace scimesh::launcher
