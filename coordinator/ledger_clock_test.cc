// Tests of the Ledger on a ManualClock: lease expiry (orphaned), revival
// within the grace window, expiry after it, backoff before a requeued step is
// offered again, and run deadlines — each at the exact millisecond, none
// depending on how fast the machine is.
#include <gtest/gtest.h>

#include "coordinator/ledger.h"
#include "coordinator/test_ledger.h"
#include "coordinator/wire_time.h"

namespace scimesh::coordinator {
namespace {

constexpr int64_t kTtl = 1000;
constexpr int64_t kGrace = 500;

class LedgerClock : public ManualClockLedgerTest {
 protected:
  void SetUp() override {
    Ledger::Options o;
    o.lease_ttl_ms = kTtl;
    o.heartbeat_ms = 300;
    o.grace_ms = kGrace;
    o.retry = RetryPolicy{1000, 8000};
    OpenLedger(o);
  }

  // Registers worker "n1" with workflow "wf" of one step "s" with `members`.
  void RegisterOneStep(const std::string& members) {
    auto req = ReadRegisterRequest((R"({"worker_id":"n1","host":"h","version":"1","concurrency":4,
        "definitions":[{"workflow":"wf","version":"1","steps":[{"id":"s")" + members + "}]}]}"));
    ASSERT_TRUE(req.ok()) << req.error().message;
    ASSERT_TRUE(ledger_->Register(req.value(), worker_).ok());
  }
  std::string StartRun(const std::string& members = "") {
    auto req = ReadRunCreateRequest((R"({"workflow":"wf","input":{})" + members + "}"));
    EXPECT_TRUE(req.ok());
    auto run = ledger_->CreateRun(req.value(), exec_);
    EXPECT_TRUE(run.ok());
    return run.ok() ? run.value().run_id : "";
  }
  std::vector<Lease> Claim() {
    ClaimRequest req;
    req.worker_id = "n1";
    auto reply = ledger_->Claim(req, worker_);
    EXPECT_TRUE(reply.ok());
    return reply.ok() ? reply.value().leases : std::vector<Lease>{};
  }
  LeaseCaller Caller(const Lease& l) const { return LeaseCaller{"w", false, "n1", l.attempt}; }
  std::string AttemptStatus(const std::string& run, int64_t attempt) {
    auto view = ledger_->ShowRun(run, exec_);
    if (!view.ok()) return "";
    for (const AttemptView& a : view.value().steps.at(0).attempts) {
      if (a.attempt == attempt) return a.status;
    }
    return "none";
  }
  std::string StepStatus(const std::string& run) {
    auto view = ledger_->ShowRun(run, exec_);
    return view.ok() ? view.value().steps.at(0).status : "";
  }
  int CountEvents(const std::string& run, const std::string& type) {
    auto j = ledger_->Journal(run, exec_);
    int n = 0;
    if (j.ok()) {
      for (const auto& e : j.value().events) n += e.type == type;
    }
    return n;
  }
  void Sweep() { ASSERT_TRUE(ledger_->Sweep().ok()); }
  // The milliseconds from now to `wire_time` (within 10 s), or -1.
  int64_t MsUntil(const std::string& wire_time) const {
    for (int64_t ms = 0; ms <= 10000; ++ms) {
      if (FormatWireTime(clock_->NowMs() + ms) == wire_time) return ms;
    }
    return -1;
  }
  void Advance(int64_t ms) { clock_->Advance(ms); }
};

TEST_F(LedgerClock, ALeaseIsOrphanedAtItsExpiryAndExpiredWhenTheGraceWindowEnds) {
  RegisterOneStep(R"(,"max_attempts":3)");
  const std::string run = StartRun();
  auto leases = Claim();
  ASSERT_EQ(leases.size(), 1u);
  ASSERT_TRUE(ledger_->Started(leases[0].lease_id, Caller(leases[0])).ok());
  Advance(kTtl - 1);
  Sweep();
  EXPECT_EQ(AttemptStatus(run, 1), "running");
  Advance(1);
  Sweep();
  EXPECT_EQ(AttemptStatus(run, 1), "orphaned");
  EXPECT_EQ(StepStatus(run), "orphaned");
  Advance(kGrace - 1);
  Sweep();
  EXPECT_EQ(AttemptStatus(run, 1), "orphaned");
  Advance(1);
  Sweep();
  EXPECT_EQ(AttemptStatus(run, 1), "expired");
  EXPECT_EQ(StepStatus(run), "queued");
  EXPECT_EQ(CountEvents(run, "step_requeued"), 1);
}

TEST_F(LedgerClock, SweepSaysWhenTheNextChangeFallsDue) {
  RegisterOneStep("");
  StartRun();
  const int64_t claimed_at = clock_->NowMs();
  ASSERT_EQ(Claim().size(), 1u);
  auto next = ledger_->Sweep();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next.value(), claimed_at + kTtl);
  Advance(kTtl);
  next = ledger_->Sweep();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next.value(), claimed_at + kTtl + kGrace);
}

TEST_F(LedgerClock, AHeartbeatOnTheLastMillisecondOfTheGraceWindowRevivesTheAttempt) {
  RegisterOneStep("");
  const std::string run = StartRun();
  auto leases = Claim();
  ASSERT_EQ(leases.size(), 1u);
  ASSERT_TRUE(ledger_->Started(leases[0].lease_id, Caller(leases[0])).ok());
  Advance(kTtl);
  Sweep();
  ASSERT_EQ(AttemptStatus(run, 1), "orphaned");
  Advance(kGrace - 1);
  auto beat = ledger_->Heartbeat(leases[0].lease_id, Caller(leases[0]), std::nullopt);
  ASSERT_TRUE(beat.ok()) << beat.error().error << " " << beat.error().reason << ": " << beat.error().message;
  EXPECT_EQ(beat.value().lease_expires_at, FormatWireTime(clock_->NowMs() + kTtl));
  EXPECT_EQ(AttemptStatus(run, 1), "running");
  EXPECT_EQ(CountEvents(run, "attempt_revived"), 1);
  // The old grace window's end passes without an expiry.
  Advance(kGrace);
  Sweep();
  EXPECT_EQ(AttemptStatus(run, 1), "running");
  EXPECT_EQ(CountEvents(run, "attempt_expired"), 0);
}

TEST_F(LedgerClock, AHeartbeatWhenTheGraceWindowHasEndedIsFenced) {
  RegisterOneStep("");
  const std::string run = StartRun();
  auto leases = Claim();
  ASSERT_EQ(leases.size(), 1u);
  ASSERT_TRUE(ledger_->Started(leases[0].lease_id, Caller(leases[0])).ok());
  // No sweep ran: the lease call itself applies the clock.
  Advance(kTtl + kGrace);
  auto beat = ledger_->Heartbeat(leases[0].lease_id, Caller(leases[0]), std::nullopt);
  ASSERT_FALSE(beat.ok());
  EXPECT_EQ(beat.error().http_status, 409);
  EXPECT_EQ(beat.error().reason, "fenced");
  EXPECT_EQ(AttemptStatus(run, 1), "expired");
}

TEST_F(LedgerClock, ARetryableFailureIsOfferedAgainExactlyWhenItsBackoffEnds) {
  RegisterOneStep(R"(,"max_attempts":3)");
  const std::string run = StartRun();
  auto leases = Claim();
  ASSERT_EQ(leases.size(), 1u);
  ASSERT_TRUE(ledger_->Started(leases[0].lease_id, Caller(leases[0])).ok());
  FailRequest fail;
  fail.worker_id = "n1";
  fail.attempt = 1;
  fail.error_class = FailClass::kRetryable;
  fail.message = "try again";
  auto failed = ledger_->Fail(leases[0].lease_id, Caller(leases[0]), fail);
  ASSERT_TRUE(failed.ok());
  ASSERT_TRUE(failed.value().requeued);
  ASSERT_TRUE(failed.value().next_attempt_not_before.has_value());
  const int64_t wait = MsUntil(*failed.value().next_attempt_not_before);
  EXPECT_GE(wait, 800);  // base 1000 ms, jitter at most 20%
  EXPECT_LE(wait, 1200);
  EXPECT_TRUE(Claim().empty());
  Advance(wait - 1);
  EXPECT_TRUE(Claim().empty());
  Advance(1);
  auto again = Claim();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt, 2);
}

TEST_F(LedgerClock, ARunTimesOutAtItsDeadline) {
  RegisterOneStep("");
  const std::string run = StartRun(R"(,"deadline_s":60)");
  auto leases = Claim();
  ASSERT_EQ(leases.size(), 1u);
  ASSERT_TRUE(ledger_->Started(leases[0].lease_id, Caller(leases[0])).ok());
  // Heartbeats keep the lease alive until the deadline.
  for (int i = 0; i < 99; ++i) {
    Advance(600);
    ASSERT_TRUE(ledger_->Heartbeat(leases[0].lease_id, Caller(leases[0]), std::nullopt).ok()) << i;
  }
  Advance(60000 - 99 * 600 - 1);
  Sweep();
  auto view = ledger_->ShowRun(run, exec_);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view.value().status, "running");
  Advance(1);
  Sweep();
  view = ledger_->ShowRun(run, exec_);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view.value().status, "timed_out");
  auto beat = ledger_->Heartbeat(leases[0].lease_id, Caller(leases[0]), std::nullopt);
  ASSERT_FALSE(beat.ok());
  EXPECT_EQ(beat.error().reason, "run_terminal");
}

}  // namespace
}  // namespace scimesh::coordinator
