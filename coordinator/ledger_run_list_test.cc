// The run list on a real Ledger: newest first, filtered by workflow and
// state, bounded with `more`, and only the runs the key may read.
#include <gtest/gtest.h>

#include "coordinator/ledger.h"
#include "coordinator/requests.h"
#include "coordinator/test_ledger.h"

namespace scimesh::coordinator {
namespace {

class RunListTest : public ManualClockLedgerTest {
 protected:
  void SetUp() override { OpenLedger(Ledger::Options{}); }

  void Register(const std::string& wf) {
    auto req = ReadRegisterRequest(R"({"worker_id":"n1","host":"h","version":"1","concurrency":4,
        "definitions":[{"workflow":")" + wf + R"(","version":"1","steps":[{"id":"s"}]}]})");
    ASSERT_TRUE(req.ok()) << req.error().message;
    ASSERT_TRUE(ledger_->Register(req.value(), worker_).ok());
  }
  std::string StartRun(const std::string& wf) {
    auto req = ReadRunCreateRequest(R"({"workflow":")" + wf + R"(","input":{}})");
    EXPECT_TRUE(req.ok());
    auto run = ledger_->CreateRun(req.value(), exec_);
    EXPECT_TRUE(run.ok());
    return run.ok() ? run.value().run_id : "";
  }
};

TEST_F(RunListTest, NewestFirstFilteredAndBounded) {
  Register("wf");
  Register("other");
  std::vector<std::string> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(StartRun("wf"));
  const std::string other = StartRun("other");
  ASSERT_TRUE(ledger_->CancelRun(runs[1], exec_).ok());

  RunListQuery all;
  auto list = ledger_->ListRuns(all, exec_);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list.value().runs.size(), 4u);
  EXPECT_EQ(list.value().runs[0].run_id, other);
  EXPECT_EQ(list.value().runs[3].run_id, runs[0]);
  EXPECT_FALSE(list.value().more);

  RunListQuery two;
  two.limit = 2;
  list = ledger_->ListRuns(two, exec_);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list.value().runs.size(), 2u);
  EXPECT_TRUE(list.value().more);

  RunListQuery cancelled_wf;
  cancelled_wf.workflow = "wf";
  cancelled_wf.state = "cancelled";
  list = ledger_->ListRuns(cancelled_wf, exec_);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list.value().runs.size(), 1u);
  EXPECT_EQ(list.value().runs[0].run_id, runs[1]);
  EXPECT_TRUE(list.value().runs[0].finished_at.has_value());

  // Another execute key sees none of them; a read key sees all.
  list = ledger_->ListRuns(all, KeyIdentity{"someone-else", kScopeExecute});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list.value().runs.empty());
  list = ledger_->ListRuns(all, KeyIdentity{"dash", kScopeRead});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list.value().runs.size(), 4u);
}

}  // namespace
}  // namespace scimesh::coordinator
