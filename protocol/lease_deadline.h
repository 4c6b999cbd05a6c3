// Lease deadline arithmetic: the coordinator's TTL becomes a local monotonic
// deadline measured from when the request was SENT.
//
// Measuring from the send (not the answer) is conservative: the coordinator
// started its TTL after it received the request, so our deadline is never
// later than its expiry, whatever the network delay. Plain values; thread-safe
// to read, like any value.
#pragma once

#include <algorithm>

#include "protocol/clock.h"

namespace scimesh {

class LeaseDeadline {
 public:
  LeaseDeadline() = default;
  // The deadline for a TTL granted by a response to a request sent at `sent_at`.
  static LeaseDeadline FromTtl(MonoTime sent_at, Millis ttl) { return LeaseDeadline(sent_at + ttl); }
  static LeaseDeadline At(MonoTime at) { return LeaseDeadline(at); }

  MonoTime at() const { return at_; }
  bool PassedAt(MonoTime now) const { return now >= at_; }
  // Time left at `now`; zero once passed.
  Millis RemainingAt(MonoTime now) const {
    return std::max(Millis(0), std::chrono::duration_cast<Millis>(at_ - now));
  }

  friend bool operator==(const LeaseDeadline&, const LeaseDeadline&) = default;

 private:
  explicit LeaseDeadline(MonoTime at) : at_(at) {}
  MonoTime at_{};
};

// Beats are never closer together than this (unless the interval is), so
// failing beats near the deadline do not bunch up.
inline constexpr Millis kMinBeatGap{50};

// When the next heartbeat is due: `interval` after the previous one was sent,
// but no later than halfway from that send to the deadline, so a beat (and
// its retries) has time before the deadline even when the TTL left is
// shorter than the interval; and never sooner than kMinBeatGap.
inline MonoTime NextBeatAt(MonoTime last_sent, Millis interval, const LeaseDeadline& deadline) {
  const MonoTime due = std::min(last_sent + interval, last_sent + (deadline.at() - last_sent) / 2);
  return std::max(due, last_sent + std::min(interval, kMinBeatGap));
}

}  // namespace scimesh
