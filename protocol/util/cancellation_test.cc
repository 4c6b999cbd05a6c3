// CancellationToken: first reason wins, waiters wake.
#include "protocol/util/cancellation.h"

#include <thread>

#include <gtest/gtest.h>

namespace scimesh {
namespace {

TEST(CancellationToken, FirstReasonWins) {
  CancellationToken t;
  EXPECT_FALSE(t.cancelled());
  EXPECT_FALSE(t.reason().has_value());
  t.Cancel(CancelReason::kFenced);
  t.Cancel(CancelReason::kExpired);
  EXPECT_TRUE(t.cancelled());
  EXPECT_EQ(t.reason(), CancelReason::kFenced);
}

TEST(CancellationToken, WakesAWaiterOnAnotherThread) {
  CancellationToken t;
  std::thread canceller([&] { t.Cancel(CancelReason::kRunTerminal); });
  EXPECT_TRUE(t.WaitFor(Millis(10000)));
  canceller.join();
  EXPECT_EQ(t.reason(), CancelReason::kRunTerminal);
}

TEST(CancellationToken, WaitTimesOutWhenNobodyCancels) {
  CancellationToken t;
  EXPECT_FALSE(t.WaitFor(Millis(10)));
}

TEST(CancellationToken, ReasonNamesMatchTheStateFile) {
  EXPECT_EQ(CancelReasonName(CancelReason::kFenced), "fenced");
  EXPECT_EQ(CancelReasonName(CancelReason::kRunTerminal), "run_terminal");
  EXPECT_EQ(CancelReasonName(CancelReason::kExpired), "expired");
  EXPECT_EQ(CancelReasonName(CancelReason::kNotStarted), "not_started");
}

}  // namespace
}  // namespace scimesh

namespace scimesh {
namespace {

TEST(CancellationToken, OnCancelRunsOnceWhenCancelledAndAtOnceWhenAlreadyCancelled) {
  CancellationToken token;
  int before = 0, after = 0;
  token.OnCancel([&] { ++before; });
  EXPECT_EQ(before, 0) << "called before any cancel";
  token.Cancel(CancelReason::kFenced);
  token.Cancel(CancelReason::kExpired);  // a second cancel calls nobody again
  EXPECT_EQ(before, 1);
  token.OnCancel([&] { ++after; });
  EXPECT_EQ(after, 1) << "a late observer must still hear of it";
}

}  // namespace
}  // namespace scimesh
