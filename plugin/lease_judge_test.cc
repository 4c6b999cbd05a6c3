// The watcher's decisions over scripted timelines.
#include "plugin/lease_judge.h"

#include <gtest/gtest.h>

namespace scimesh::spank {
namespace {

using Action = Judgement::Action;

LeaseState Held(int64_t seq, int64_t deadline, std::string host = "n1") {
  LeaseState s;
  s.lease_id = "l_0c8e51d2a4b94f17";
  s.attempt = 2;
  s.holder = LeaseHolder::kRank0;
  s.host = std::move(host);
  s.seq = seq;
  s.deadline_mono_ms = deadline;
  return s;
}

LeaseJudge Judge() { return LeaseJudge("l_0c8e51d2a4b94f17", 2, "n1", 30000, 1000); }

TEST(LeaseJudge, HeldBeforeDeadlineIsKept) {
  auto j = Judge();
  EXPECT_EQ(j.Observe(Held(1, 5000), 4000).action, Action::kKeep);
}

TEST(LeaseJudge, DeadlinePassedOnThisHostCancels) {
  auto j = Judge();
  auto r = j.Observe(Held(1, 5000), 5001);
  EXPECT_EQ(r.action, Action::kCancel);
  EXPECT_NE(r.why.find("deadline"), std::string::npos);
}

TEST(LeaseJudge, LostCancelsWithTheReason) {
  auto j = Judge();
  LeaseState s = Held(3, 99999);
  s.state = LeaseHold::kLost;
  s.reason = CancelReason::kFenced;
  auto r = j.Observe(s, 2000);
  EXPECT_EQ(r.action, Action::kCancel);
  EXPECT_NE(r.why.find("fenced"), std::string::npos);
}

// Lost where another attempt may run: fencing needs the step gone now.
TEST(LeaseJudge, LostForFencingCancelsAtOnce) {
  for (std::optional<CancelReason> reason :
       {std::optional(CancelReason::kFenced), std::optional(CancelReason::kExpired),
        std::optional(CancelReason::kNotStarted), std::optional<CancelReason>()}) {
    auto j = Judge();
    LeaseState s = Held(3, 99999);
    s.state = LeaseHold::kLost;
    s.reason = reason;
    auto r = j.Observe(s, 2000);
    EXPECT_EQ(r.action, Action::kCancel) << (reason ? CancelReasonName(*reason) : "no reason");
  }
}

// The run's owner cancelled it: no other attempt can start, nothing to fence;
// the ranks see cancelled() and get their grace.
TEST(LeaseJudge, RunCancelledByItsOwnerEndsWithinTheGrace) {
  auto j = Judge();
  LeaseState s = Held(3, 99999);
  s.state = LeaseHold::kLost;
  s.reason = CancelReason::kRunTerminal;
  auto r = j.Observe(s, 2000);
  EXPECT_EQ(r.action, Action::kEndWithinGrace);
  EXPECT_NE(r.why.find("run_terminal"), std::string::npos) << r.why;
}

TEST(LeaseJudge, DoneStopsWatching) {
  auto j = Judge();
  LeaseState s = Held(3, 0);
  s.state = LeaseHold::kDone;
  EXPECT_EQ(j.Observe(s, 99999).action, Action::kStopWatching);
}

TEST(LeaseJudge, OtherHostNeedsProgressWithinTheTtl) {
  auto j = Judge();
  // Its deadline is another host's clock: never compared.
  EXPECT_EQ(j.Observe(Held(1, 0, "batch"), 2000).action, Action::kKeep);
  EXPECT_EQ(j.Observe(Held(2, 0, "batch"), 30000).action, Action::kKeep);
  EXPECT_EQ(j.Observe(Held(2, 0, "batch"), 59999).action, Action::kKeep);
  EXPECT_EQ(j.Observe(Held(2, 0, "batch"), 60001).action, Action::kCancel);
}

TEST(LeaseJudge, UnreadableStateCancelsOnlyAfterATtl) {
  auto j = Judge();
  Result<LeaseState> missing = Status::NotFound("no lease state file");
  EXPECT_EQ(j.Observe(missing, 30000).action, Action::kKeep);
  auto r = j.Observe(missing, 31001);
  EXPECT_EQ(r.action, Action::kCancel);
  EXPECT_NE(r.why.find("no lease state file"), std::string::npos);
}

TEST(LeaseJudge, AnotherLeasesStateIsNotOurs) {
  auto j = Judge();
  LeaseState other = Held(1, 999999);
  other.attempt = 3;
  EXPECT_EQ(j.Observe(other, 2000).action, Action::kKeep);
  EXPECT_EQ(j.Observe(other, 40000).action, Action::kCancel);
}

}  // namespace
}  // namespace scimesh::spank
