// The claim loop's pauses: docs/launcher.md "Claiming".
#include "launcher/claim_pacing.h"

#include <algorithm>

namespace scimesh::launcher {

Millis ClaimPacing::Answered(int offered, Millis held_for, Millis asked) {
  failure_pause_ = Millis(0);
  last_failure_.clear();
  const bool held = asked >= Millis(1000) && held_for >= asked / 2;
  if (offered > 0 || held) {
    empty_pause_ = Millis(0);
    return Millis(0);
  }
  empty_pause_ = empty_pause_ == Millis(0) ? kFirstEmptyPause : std::min(empty_pause_ * 2, kMaxEmptyPause);
  return empty_pause_;
}

Millis ClaimPacing::Failed(const std::string& reason, bool* first) {
  empty_pause_ = Millis(0);
  *first = reason != last_failure_;
  last_failure_ = reason;
  failure_pause_ =
      failure_pause_ == Millis(0) ? kFirstFailurePause : std::min(failure_pause_ * 2, kMaxFailurePause);
  return failure_pause_;
}

}  // namespace scimesh::launcher
