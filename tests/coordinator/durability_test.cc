// Integration: kill -9 right after an accepted `complete`, restart on the
// same database: the outcome is there, and a lease that was in flight still
// expires and is requeued from its stored times. And SIGTERM: held claims
// are released and the process exits 0.
#include <future>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

using Durability = CoordinatorTest;

TEST_F(Durability, KillNineLosesNoAcceptedOutcomeAndLeasesStillExpireAfterRestart) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"a"},{"id":"b"}])"));
  std::string run = StartRunOrEmpty("wf");
  auto leases = Leases(w1_->Claim("worker-1", 2, 0));
  ASSERT_EQ(leases.size(), 2u);
  ASSERT_EQ(w1_->Started(leases[1].lease_id, "worker-1", 1).status, 200);
  Reply done = w1_->Complete(leases[0].lease_id, "worker-1", 1, R"({"kept":true})");
  ASSERT_EQ(done.status, 200);
  process_->Kill9();  // right after the 200

  ASSERT_EQ(process_->Start(), "");
  exec_ = Client("exec");
  w1_ = Client("w1");
  Reply show = exec_->ShowRun(run);
  ASSERT_EQ(show.status, 200);
  const rapidjson::Value* a = FindStep(show, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_STREQ((*a)["status"].GetString(), "completed");
  EXPECT_TRUE((*a)["output"]["kept"].IsTrue());
  // A replay of the complete after the restart: already_applied, not a second outcome.
  EXPECT_EQ(w1_->Complete(leases[0].lease_id, "worker-1", 1).Str("reason"), "already_applied");

  // b's lease got no heartbeat across the restart: it expires and is requeued.
  LeaseRef again = ClaimOne(*w1_, "worker-1", 10000);
  EXPECT_EQ(again.step_id, "b");
  EXPECT_EQ(again.attempt, 2);
  EXPECT_EQ(AttemptStatus(run, "b", 1), "expired");
  EXPECT_EQ(w1_->Complete(again.lease_id, "worker-1", 2).status, 200);
  EXPECT_EQ(RunStatus(run), "completed");
  EXPECT_EQ(CountEvents(run, "attempt_completed"), 2);
}

TEST_F(Durability, SigtermReleasesHeldClaimsAndExitsZero) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  auto claim = std::async(std::launch::async, [this] { return Client("w1")->Claim("worker-1", 1, 20000); });
  ASSERT_EQ(claim.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  EXPECT_EQ(process_->Terminate(), 0);
  Reply r = claim.get();
  // Released with an empty answer, not held for its 20 s.
  EXPECT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(r["leases"].Size(), 0u);
  EXPECT_NE(process_->log().find("stopped"), std::string::npos);
}

TEST_F(Durability, ASecondCoordinatorOnTheSameDatabaseIsRefused) {
  std::string out;
  int rc = process_->RunCli({"serve", "--db", process_->db(), "--keys", process_->keys_file(), "--listen",
                             "127.0.0.1:0"},
                            {}, &out);
  EXPECT_EQ(rc, 1);
}

}  // namespace
}  // namespace scimesh::coordinator::testing
