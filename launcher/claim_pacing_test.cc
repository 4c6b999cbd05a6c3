// ClaimPacing: the pauses between claims that keep the loop from spinning.
#include "launcher/claim_pacing.h"

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

TEST(ClaimPacingTest, LeasesAndHeldPollsClaimAgainAtOnce) {
  ClaimPacing p;
  EXPECT_EQ(p.Answered(2, Millis(5), Millis(20000)), Millis(0));
  EXPECT_EQ(p.Answered(0, Millis(20000), Millis(20000)), Millis(0));
  EXPECT_EQ(p.Answered(0, Millis(1000), Millis(2000)), Millis(0));
}

TEST(ClaimPacingTest, EmptyAnswersSoonerThanThePollDoubleUpToFiveSeconds) {
  ClaimPacing p;
  Millis want{100};
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(p.Answered(0, Millis(2), Millis(20000)), want) << "answer " << i;
    want = std::min(want * 2, ClaimPacing::kMaxEmptyPause);
  }
  // A poll that asked for no wait at all is a poll answered at once.
  ClaimPacing q;
  EXPECT_EQ(q.Answered(0, Millis(0), Millis(0)), Millis(100));
  EXPECT_EQ(q.Answered(0, Millis(0), Millis(0)), Millis(200));
}

TEST(ClaimPacingTest, ALeaseOrAHeldPollEndsTheEmptyPauses) {
  ClaimPacing p;
  (void)p.Answered(0, Millis(1), Millis(20000));
  (void)p.Answered(0, Millis(1), Millis(20000));
  EXPECT_EQ(p.Answered(1, Millis(1), Millis(20000)), Millis(0));
  EXPECT_EQ(p.Answered(0, Millis(1), Millis(20000)), Millis(100));
}

TEST(ClaimPacingTest, FailuresDoubleUpToThirtySecondsAndEachReasonIsSaidOnce) {
  ClaimPacing p;
  bool first = false;
  EXPECT_EQ(p.Failed("claim: cannot reach", &first), Millis(1000));
  EXPECT_TRUE(first);
  EXPECT_EQ(p.Failed("claim: cannot reach", &first), Millis(2000));
  EXPECT_FALSE(first);
  for (int i = 0; i < 10; ++i) (void)p.Failed("claim: cannot reach", &first);
  EXPECT_EQ(p.Failed("claim: cannot reach", &first), ClaimPacing::kMaxFailurePause);
  EXPECT_EQ(p.Failed("claim answered 401", &first), Millis(30000));
  EXPECT_TRUE(first);
  // An answer resets both: the next failure pauses 1 s and is said again.
  (void)p.Answered(0, Millis(20000), Millis(20000));
  EXPECT_EQ(p.Failed("claim answered 401", &first), Millis(1000));
  EXPECT_TRUE(first);
}

}  // namespace
}  // namespace scimesh::launcher
