// ClaimHolds: a held claim looks again on an announcement, at its deadline,
// never misses an announcement made while it looks, and is answered on Stop.
// Deadlines are on a ManualClock: nothing but an announcement or Advance can
// wake a held claim, so the 5 s safety recheck never stands in for either.
#include "coordinator/claim_holds.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace scimesh::coordinator {
namespace {

// How long a test waits for the loop thread to hand a claim back (real time).
constexpr auto kHandBack = std::chrono::seconds(30);
using std::chrono::milliseconds;
using std::chrono::seconds;

class ClaimHoldsTest : public ::testing::Test {
 protected:
  ClaimHoldsTest() : queue_(2), holds_(queue_, clock_) { holds_.Start(); }
  ~ClaimHoldsTest() override {
    holds_.Stop();
    queue_.Drain();
  }
  ManualClock clock_;
  WorkQueue queue_;
  ClaimHolds holds_;
};

TEST_F(ClaimHoldsTest, AHeldClaimLooksAgainWhenWorkIsAnnounced) {
  std::atomic<bool> work{false};
  std::promise<bool> answered;
  holds_.Poll(clock_.Now() + seconds(60), [&](bool shutting_down) {
    if (!work && !shutting_down) return false;
    answered.set_value(shutting_down);
    return true;
  });
  EXPECT_EQ(holds_.held(), 1u);
  work = true;
  holds_.WorkAvailable();
  auto f = answered.get_future();
  ASSERT_EQ(f.wait_for(kHandBack), std::future_status::ready) << "the announcement woke the claim";
  EXPECT_FALSE(f.get());
  EXPECT_EQ(holds_.held(), 0u);
}

TEST_F(ClaimHoldsTest, AnAnnouncementMadeWhileTheClaimLooksIsNotMissed) {
  std::atomic<int> looks{0};
  std::promise<void> answered;
  holds_.Poll(clock_.Now() + seconds(60), [&](bool) {
    if (++looks == 1) {
      holds_.WorkAvailable();  // announced after the look began, before it is held
      return false;
    }
    answered.set_value();
    return true;
  });
  EXPECT_EQ(answered.get_future().wait_for(kHandBack), std::future_status::ready);
  EXPECT_EQ(looks.load(), 2);
}

TEST_F(ClaimHoldsTest, AHeldClaimIsAnsweredAtItsDeadlineWithoutAnnouncement) {
  std::promise<void> answered;
  std::atomic<int> looks{0};
  const auto until = clock_.Now() + milliseconds(200);
  holds_.Poll(until, [&](bool) {
    ++looks;
    if (clock_.Now() < until) return false;
    answered.set_value();
    return true;
  });
  auto f = answered.get_future();
  EXPECT_EQ(f.wait_for(milliseconds(300)), std::future_status::timeout) << "answered before its deadline";
  clock_.Advance(milliseconds(199));
  EXPECT_EQ(f.wait_for(milliseconds(300)), std::future_status::timeout) << "answered before its deadline";
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(f.wait_for(kHandBack), std::future_status::ready);
  EXPECT_EQ(holds_.held(), 0u);
}

TEST_F(ClaimHoldsTest, AHeldClaimLooksAgainEveryFiveSecondsWithoutAnnouncement) {
  std::atomic<int> looks{0};
  holds_.Poll(clock_.Now() + seconds(60), [&](bool shutting_down) {
    ++looks;
    return shutting_down;
  });
  clock_.Advance(seconds(5));
  for (int i = 0; i < 3000 && looks.load() < 2; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(looks.load(), 2) << "the safety recheck looked again once";
  // The claim is still held: Stop answers it here, while `looks` lives (the
  // fixture's Stop would call the claim after this body's locals are gone).
  holds_.Stop();
  queue_.Drain();
  EXPECT_EQ(looks.load(), 3) << "Stop answered the held claim once";
}

TEST_F(ClaimHoldsTest, StopAnswersEveryHeldClaimAndEveryLaterOne) {
  std::atomic<int> told_to_stop{0};
  for (int i = 0; i < 3; ++i) {
    holds_.Poll(clock_.Now() + seconds(60), [&](bool shutting_down) {
      told_to_stop += shutting_down;
      return shutting_down;
    });
  }
  holds_.Stop();
  EXPECT_EQ(told_to_stop.load(), 3);
  holds_.Poll(clock_.Now() + seconds(60), [&](bool shutting_down) {
    told_to_stop += shutting_down;
    return shutting_down;
  });
  EXPECT_EQ(told_to_stop.load(), 4);
  EXPECT_EQ(holds_.held(), 0u);
}

}  // namespace
}  // namespace scimesh::coordinator
