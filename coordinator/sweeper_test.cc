// Tests of the Sweeper on the Ledger's ManualClock: a lease an hour long is
// orphaned by the sweeper thread once the clock says the hour has passed —
// no test waits for a lease to expire in real time. (The exact millisecond
// of each change is ledger_clock_test.cc's.)
#include "coordinator/sweeper.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "coordinator/ledger.h"
#include "coordinator/test_ledger.h"

namespace scimesh::coordinator {
namespace {

constexpr int64_t kTtl = 3600000;  // an hour: never reached in real time
constexpr int64_t kGrace = 60000;

class SweeperTest : public ManualClockLedgerTest {
 protected:
  void SetUp() override {
    Ledger::Signals signals;
    // What a commit made due: the sweeper's cue, and the test's sign that a
    // sweep changed something.
    signals.clock_due = [this](int64_t at) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        due_.push_back(at);
      }
      cv_.notify_all();
      if (sweeper_) sweeper_->DueAt(at);
    };
    Ledger::Options options;
    options.lease_ttl_ms = kTtl;
    options.grace_ms = kGrace;
    OpenLedger(options, signals);
    auto reg = ReadRegisterRequest(R"({"worker_id":"n1","host":"h","version":"1","concurrency":1,
        "definitions":[{"workflow":"wf","version":"1","steps":[{"id":"s"}]}]})");
    ASSERT_TRUE(reg.ok());
    ASSERT_TRUE(ledger_->Register(reg.value(), worker_).ok());
    auto run = ledger_->CreateRun(ReadRunCreateRequest(R"({"workflow":"wf","input":{}})").value(), exec_);
    ASSERT_TRUE(run.ok());
    run_id_ = run.value().run_id;
    ClaimRequest claim;
    claim.worker_id = "n1";
    auto claimed = ledger_->Claim(claim, worker_);
    ASSERT_TRUE(claimed.ok());
    ASSERT_EQ(claimed.value().leases.size(), 1u);
    claimed_at_ = clock_->NowMs();
  }
  void TearDown() override {
    if (sweeper_) sweeper_->Stop();
  }

  // Waits (bounded, for a broken sweeper) until a commit makes `at` due.
  bool AwaitDue(int64_t at) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] {
      return std::find(due_.begin(), due_.end(), at) != due_.end();
    });
  }
  std::string AttemptStatus() {
    auto view = ledger_->ShowRun(run_id_, exec_);
    if (!view.ok() || view.value().steps.at(0).attempts.empty()) return "";
    return view.value().steps.at(0).attempts.at(0).status;
  }

  std::unique_ptr<Sweeper> sweeper_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> due_;
  std::string run_id_;
  int64_t claimed_at_ = 0;
};

TEST_F(SweeperTest, OrphansALeaseWhenTheLedgersClockPassesItsExpiry) {
  sweeper_ = std::make_unique<Sweeper>(*ledger_);
  sweeper_->Start();
  clock_->Advance(kTtl - 1);
  sweeper_->DueAt(clock_->NowMs());  // wakes it: a sweep one millisecond early
  clock_->Advance(1);
  sweeper_->DueAt(clock_->NowMs());
  // Orphaning makes the end of the grace window due.
  ASSERT_TRUE(AwaitDue(claimed_at_ + kTtl + kGrace)) << "the sweeper did not orphan the lease";
  EXPECT_EQ(AttemptStatus(), "orphaned");
}

}  // namespace
}  // namespace scimesh::coordinator
