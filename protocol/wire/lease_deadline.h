// Lease deadline arithmetic: the coordinator's TTL becomes a local monotonic
// deadline measured from when the request was SENT.
//
// Measuring from the send (not the answer) is conservative: the coordinator
// started its TTL after it received the request, so our deadline is never
// later than its expiry, whatever the network delay. Plain values; thread-safe
// to read, like any value.
#pragma once

#include <algorithm>
#include <bit>

#include "protocol/util/clock.h"

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

// The coarsest grid a beat is rounded to (see NextBeatOnGrid).
inline constexpr Millis kMaxBeatGrid{256};

// NextBeatAt rounded DOWN to a grid shared by every lease on this clock, so
// that one thread keeping many leases wakes once for all the beats that fall
// due close together. The grid is the largest power of two of milliseconds
// that is at most an eighth of the time from the last send to NextBeatAt and
// at most kMaxBeatGrid, aligned to the clock's epoch (so the grids of
// different intervals nest). A beat thus goes at most 1/8 of that time (and
// 256 ms) early, never later, and never sooner than kMinBeatGap after the
// last send (unless the interval is shorter): beating early is always safe.
inline MonoTime NextBeatOnGrid(MonoTime last_sent, Millis interval, const LeaseDeadline& deadline) {
  const MonoTime due = NextBeatAt(last_sent, interval, deadline);
  const auto eighth = std::chrono::duration_cast<Millis>(due - last_sent) / 8;
  if (eighth < Millis(2)) return due;  // a 1 ms grid would save nothing
  const auto grid_ms = std::bit_floor(static_cast<uint64_t>(std::min(eighth, kMaxBeatGrid).count()));
  const Millis grid(static_cast<int64_t>(grid_ms));
  const MonoTime on_grid = due - due.time_since_epoch() % grid;
  return std::max(on_grid, last_sent + std::min(interval, kMinBeatGap));
}

}  // namespace scimesh
