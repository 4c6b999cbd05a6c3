// ClaimHolds: a held claim looks again on an announcement, at its deadline,
// never misses an announcement made while it looks, and is answered on Stop.
#include "coordinator/claim_holds.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace scimesh::coordinator {
namespace {

using Clock = ClaimHolds::Clock;
// Less than the 5 s safety recheck: a claim answered within it was woken by
// the announcement, not by the recheck.
constexpr auto kBeforeTheRecheck = std::chrono::seconds(3);
using std::chrono::milliseconds;
using std::chrono::seconds;

class ClaimHoldsTest : public ::testing::Test {
 protected:
  ClaimHoldsTest() : queue_(2), holds_(queue_) { holds_.Start(); }
  ~ClaimHoldsTest() override {
    holds_.Stop();
    queue_.Drain();
  }
  WorkQueue queue_;
  ClaimHolds holds_;
};

TEST_F(ClaimHoldsTest, AHeldClaimLooksAgainWhenWorkIsAnnounced) {
  std::atomic<bool> work{false};
  std::promise<bool> answered;
  holds_.Poll(Clock::now() + seconds(60), [&](bool shutting_down) {
    if (!work && !shutting_down) return false;
    answered.set_value(shutting_down);
    return true;
  });
  EXPECT_EQ(holds_.held(), 1u);
  work = true;
  holds_.WorkAvailable();
  auto f = answered.get_future();
  ASSERT_EQ(f.wait_for(kBeforeTheRecheck), std::future_status::ready) << "the announcement woke the claim";
  EXPECT_FALSE(f.get());
  EXPECT_EQ(holds_.held(), 0u);
}

TEST_F(ClaimHoldsTest, AnAnnouncementMadeWhileTheClaimLooksIsNotMissed) {
  std::atomic<int> looks{0};
  std::promise<void> answered;
  holds_.Poll(Clock::now() + seconds(60), [&](bool) {
    if (++looks == 1) {
      holds_.WorkAvailable();  // announced after the look began, before it is held
      return false;
    }
    answered.set_value();
    return true;
  });
  EXPECT_EQ(answered.get_future().wait_for(kBeforeTheRecheck), std::future_status::ready);
  EXPECT_EQ(looks.load(), 2);
}

TEST_F(ClaimHoldsTest, AHeldClaimIsAnsweredAtItsDeadlineWithoutAnnouncement) {
  std::promise<void> answered;
  const auto until = Clock::now() + milliseconds(200);
  holds_.Poll(until, [&](bool) {
    if (Clock::now() < until) return false;
    answered.set_value();
    return true;
  });
  EXPECT_EQ(answered.get_future().wait_for(seconds(30)), std::future_status::ready);
}

TEST_F(ClaimHoldsTest, StopAnswersEveryHeldClaimAndEveryLaterOne) {
  std::atomic<int> told_to_stop{0};
  for (int i = 0; i < 3; ++i) {
    holds_.Poll(Clock::now() + seconds(60), [&](bool shutting_down) {
      told_to_stop += shutting_down;
      return shutting_down;
    });
  }
  holds_.Stop();
  EXPECT_EQ(told_to_stop.load(), 3);
  holds_.Poll(Clock::now() + seconds(60), [&](bool shutting_down) {
    told_to_stop += shutting_down;
    return shutting_down;
  });
  EXPECT_EQ(told_to_stop.load(), 4);
  EXPECT_EQ(holds_.held(), 0u);
}

}  // namespace
}  // namespace scimesh::coordinator
