// Deadline arithmetic on an injected clock.
#include "protocol/lease_deadline.h"

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

TEST(LeaseDeadline, MonoMillisIsTheClockReadingInMilliseconds) {
  ManualClock clock(MonoTime(std::chrono::seconds(42)));
  EXPECT_EQ(MonoMillis(clock.Now()), 42000);
  clock.Advance(std::chrono::microseconds(1500));
  EXPECT_EQ(MonoMillis(clock.Now()), 42001);
}

}  // namespace
}  // namespace scimesh
