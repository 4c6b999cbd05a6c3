// Backoff arithmetic and Retry-After parsing.
#include "protocol/util/backoff.h"

#include <gtest/gtest.h>

namespace scimesh {
namespace {

TEST(Backoff, GrowsExponentiallyFromTheBase) {
  const BackoffPolicy p;  // 200 ms, x2, +-50 %, cap 10 s
  // unit 0.5 means no jitter.
  EXPECT_EQ(BackoffDelay(p, 1, 0.5), Millis(200));
  EXPECT_EQ(BackoffDelay(p, 2, 0.5), Millis(400));
  EXPECT_EQ(BackoffDelay(p, 3, 0.5), Millis(800));
  EXPECT_EQ(BackoffDelay(p, 6, 0.5), Millis(6400));
}

TEST(Backoff, JitterStaysWithinHalfEitherWay) {
  const BackoffPolicy p;
  EXPECT_EQ(BackoffDelay(p, 2, 0.0), Millis(200));   // -50 %
  EXPECT_EQ(BackoffDelay(p, 2, 0.999999), Millis(600));  // +50 %
  for (double u = 0; u < 1; u += 0.05) {
    auto d = BackoffDelay(p, 3, u);
    EXPECT_GE(d, Millis(400));
    EXPECT_LE(d, Millis(1200));
  }
}

TEST(Backoff, IsCappedEvenWithJitterAndHugeRetryCounts) {
  const BackoffPolicy p;
  EXPECT_EQ(BackoffDelay(p, 7, 0.5), Millis(10000));
  EXPECT_EQ(BackoffDelay(p, 7, 0.999), Millis(10000));
  EXPECT_EQ(BackoffDelay(p, 1000000, 0.999), Millis(10000));
  EXPECT_GE(BackoffDelay(p, 1000000, 0.0), Millis(5000));
  EXPECT_EQ(BackoffDelay(p, 0, 0.5), Millis(200));  // nonsense counts clamp to the first retry
}

TEST(RetryAfter, DeltaSeconds) {
  const auto now = std::chrono::system_clock::now();
  EXPECT_EQ(ParseRetryAfter("3", now), Millis(3000));
  EXPECT_EQ(ParseRetryAfter(" 0 ", now), Millis(0));
  EXPECT_EQ(ParseRetryAfter("99999999999999999999", now), Millis(int64_t{999999999} * 1000));
}

TEST(RetryAfter, HttpDate) {
  const auto at = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", at - std::chrono::seconds(5)), Millis(5000));
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", at + std::chrono::seconds(5)), Millis(0));
}

// Found by fuzz/client_responses_fuzzer: a date past 2262 overflowed the
// clock's nanoseconds (undefined behaviour; a wrapped, often negative wait).
TEST(RetryAfter, DatesOutsideTheClocksRangeSaturateOrAreNow) {
  const auto now = std::chrono::system_clock::from_time_t(1'800'000'000);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 6585 07:28:00 GMT", now), Millis(int64_t{999999999} * 1000));
  EXPECT_EQ(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now), Millis(int64_t{999999999} * 1000));
  EXPECT_EQ(ParseRetryAfter("Mon, 01 Jan 0001 00:00:00 GMT", now), Millis(0));
  EXPECT_EQ(ParseRetryAfter("Fri, 15 Jan 2027 08:00:10 GMT", now), Millis(10000));
}

TEST(RetryAfter, GarbageIsIgnored) {
  const auto now = std::chrono::system_clock::now();
  for (const char* v : {"", "soon", "-1", "1.5", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Foo 1994 08:49:37 GMT"}) {
    EXPECT_FALSE(ParseRetryAfter(v, now).has_value()) << v;
  }
}

}  // namespace
}  // namespace scimesh
