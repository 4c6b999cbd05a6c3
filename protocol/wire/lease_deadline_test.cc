// Deadline arithmetic on an injected clock.
#include "protocol/wire/lease_deadline.h"

#include <set>

#include <gtest/gtest.h>

namespace scimesh {
namespace {

TEST(LeaseDeadline, IsMeasuredFromWhenTheRequestWasSent) {
  ManualClock clock;
  const MonoTime sent = clock.Now();
  clock.Advance(Millis(700));  // the answer took 700 ms to arrive
  const auto d = LeaseDeadline::FromTtl(sent, Millis(30000));
  EXPECT_EQ(d.at(), sent + Millis(30000));
  EXPECT_EQ(d.RemainingAt(clock.Now()), Millis(29300));  // not 30 s: the trip counts against it
}

TEST(LeaseDeadline, PassesExactlyAtTheDeadline) {
  ManualClock clock;
  const auto d = LeaseDeadline::FromTtl(clock.Now(), Millis(100));
  clock.Advance(Millis(99));
  EXPECT_FALSE(d.PassedAt(clock.Now()));
  EXPECT_EQ(d.RemainingAt(clock.Now()), Millis(1));
  clock.Advance(Millis(1));
  EXPECT_TRUE(d.PassedAt(clock.Now()));
  clock.Advance(Millis(5000));
  EXPECT_EQ(d.RemainingAt(clock.Now()), Millis(0));  // never negative
}

TEST(LeaseDeadline, NextBeatIsAnIntervalAfterTheLastSendButAtMostHalfwayToTheDeadline) {
  ManualClock clock;
  const MonoTime t0 = clock.Now();
  const auto d = LeaseDeadline::FromTtl(t0, Millis(30000));
  EXPECT_EQ(NextBeatAt(t0, Millis(10000), d), t0 + Millis(10000));
  // An interval close to the TTL: beat halfway, leaving time for retries.
  EXPECT_EQ(NextBeatAt(t0, Millis(25000), d), t0 + Millis(15000));
  // Little TTL left (a long claim): beat soon, well before the deadline.
  EXPECT_EQ(NextBeatAt(t0 + Millis(26000), Millis(10000), d), t0 + Millis(28000));
  EXPECT_LT(NextBeatAt(t0 + Millis(26000), Millis(10000), d), d.at());
  // Right before the deadline beats do not bunch up: at least 50 ms apart.
  EXPECT_EQ(NextBeatAt(d.at() - Millis(60), Millis(10000), d), d.at() - Millis(10));
  EXPECT_EQ(NextBeatAt(d.at() - Millis(10), Millis(10000), d), d.at() + Millis(40));
  // Unless the interval itself is shorter.
  EXPECT_EQ(NextBeatAt(t0, Millis(20), d), t0 + Millis(20));
}

TEST(LeaseDeadline, BeatsOnTheGridGoAtMostAnEighthEarlyAndLeasesDueCloseTogetherShareOne) {
  const MonoTime epoch{};  // the grid is aligned to the clock's epoch
  const auto d = LeaseDeadline::At(epoch + std::chrono::hours(2));
  // heartbeat_ms 10 s: an eighth is 1,250 ms, so the grid is the cap, 256 ms.
  const MonoTime sent = epoch + Millis(3600300);
  EXPECT_EQ(NextBeatOnGrid(sent, Millis(10000), d), epoch + Millis(3610112));  // 3,610,300 down to 14,102 x 256
  // Ten leases whose beats fall due 10 ms apart share one or two grid points.
  std::set<MonoTime> wake_ups;
  for (int i = 0; i < 10; ++i) wake_ups.insert(NextBeatOnGrid(sent + Millis(10) * i, Millis(10000), d));
  EXPECT_LE(wake_ups.size(), 2u);
  for (int i = 0; i < 2000; ++i) {  // never late, at most an eighth (and 256 ms) early
    const MonoTime s = sent + Millis(7) * i;
    const MonoTime at = NextBeatOnGrid(s, Millis(10000), d);
    EXPECT_LE(at, NextBeatAt(s, Millis(10000), d));
    EXPECT_GT(at, NextBeatAt(s, Millis(10000), d) - Millis(256));
  }
  // heartbeat_ms 1 s: an eighth is 125 ms, the grid 64 ms.
  EXPECT_EQ(NextBeatOnGrid(epoch + Millis(1000), Millis(1000), d), epoch + Millis(1984));
  // Halfway to the deadline comes first: the grid follows that shorter gap
  // (450 ms: 32 ms), 10,450 down to 326 x 32.
  const auto near = LeaseDeadline::At(epoch + Millis(10900));
  EXPECT_EQ(NextBeatOnGrid(epoch + Millis(10000), Millis(10000), near), epoch + Millis(10432));
  // Never sooner than kMinBeatGap after the last send, and no grid below 2 ms.
  EXPECT_EQ(NextBeatOnGrid(near.at() - Millis(60), Millis(10000), near), near.at() - Millis(10));
  EXPECT_EQ(NextBeatOnGrid(epoch + Millis(1001), Millis(10), d), epoch + Millis(1011));
}

TEST(LeaseDeadline, MonoMillisIsTheClockReadingInMilliseconds) {
  ManualClock clock(MonoTime(std::chrono::seconds(42)));
  EXPECT_EQ(MonoMillis(clock.Now()), 42000);
  clock.Advance(std::chrono::microseconds(1500));
  EXPECT_EQ(MonoMillis(clock.Now()), 42001);
}

}  // namespace
}  // namespace scimesh
