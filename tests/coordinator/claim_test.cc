// Integration: claiming — the long poll (early return, wake on run start),
// max, the run_id restriction, order, and capacity-aware offers (`free`).
#include <chrono>
#include <future>
#include <string>

#include "coordinator_fixture.h"
#include "tests/lib/time_scale.h"

namespace scimesh::coordinator::testing {
namespace {

using Claiming = CoordinatorTest;

TEST_F(Claiming, NothingOfferableAnswersEmptyWithoutWaiting) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  Reply r = w1_->Claim("worker-1", 1, 0);
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_TRUE(r["leases"].IsArray());
  EXPECT_EQ(r["leases"].Size(), 0u);
}

TEST_F(Claiming, HeldClaimReturnsEmptyAtTheEndOfItsWait) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  Reply r = w1_->Claim("worker-1", 1, 300);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r["leases"].Size(), 0u);
}

TEST_F(Claiming, HeldClaimWakesWhenARunStarts) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  // The claim is blocked (nothing to offer); then a run starts.
  auto claim = std::async(std::launch::async, [this] {
    auto client = Client("w1");
    return client->Claim("worker-1", 1, 20000);
  });
  // Let the claim reach the coordinator and find nothing: await a first
  // empty pass by watching that it has not returned yet.
  ASSERT_EQ(claim.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  std::string run = StartRunOrEmpty("wf");
  Reply r = claim.get();
  ASSERT_EQ(r.status, 200) << r.Describe();
  ASSERT_EQ(r["leases"].Size(), 1u);  // it returned with the lease, not because its wait ended
  EXPECT_EQ(std::string(r["leases"][0]["run_id"].GetString()), run);
}

TEST_F(Claiming, HeldClaimWakesWhenAStepFinishesAndItsSuccessorBecomesRunnable) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"a"},{"id":"b","needs":["a"]}])"));
  StartRunOrEmpty("wf");
  LeaseRef a = ClaimOne(*w1_, "worker-1");
  auto claim = std::async(std::launch::async, [this] { return Client("w1")->Claim("worker-1", 1, 20000); });
  ASSERT_EQ(claim.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  ASSERT_EQ(w1_->Complete(a.lease_id, "worker-1", 1).status, 200);
  Reply r = claim.get();
  ASSERT_EQ(r["leases"].Size(), 1u);
  EXPECT_STREQ(r["leases"][0]["step_id"].GetString(), "b");
}

TEST_F(Claiming, OffersUpToMaxOldestRunFirstThenStepOrder) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"x"},{"id":"y"}])"));
  std::string first = StartRunOrEmpty("wf");
  std::string second = StartRunOrEmpty("wf");
  auto leases = Leases(w1_->Claim("worker-1", 3, 0));
  ASSERT_EQ(leases.size(), 3u);
  EXPECT_EQ(leases[0].run_id, first);
  EXPECT_EQ(leases[0].step_id, "x");
  EXPECT_EQ(leases[1].run_id, first);
  EXPECT_EQ(leases[1].step_id, "y");
  EXPECT_EQ(leases[2].run_id, second);
  EXPECT_EQ(leases[2].step_id, "x");
  auto rest = Leases(w1_->Claim("worker-1", 3, 0));
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].run_id, second);
}

TEST_F(Claiming, RunIdRestrictsOffers) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string first = StartRunOrEmpty("wf");
  std::string second = StartRunOrEmpty("wf");
  auto leases = Leases(w1_->Claim("worker-1", 5, 0, R"(,"run_id":)" + Quote(second)));
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].run_id, second);
}

TEST_F(Claiming, OnlyDefinitionsTheWorkerRegisteredAreOffered) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  RegisterOrDie(*w2_, "worker-2", Definitions("other", OneStep()));
  StartRunOrEmpty("wf");
  EXPECT_TRUE(Leases(w2_->Claim("worker-2", 1, 0)).empty());
  EXPECT_EQ(Leases(w1_->Claim("worker-1", 1, 0)).size(), 1u);
}

TEST_F(Claiming, UnregisteredWorkerIsA400OnWorkerId) {
  Reply r = w1_->Claim("never-registered", 1, 0);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Str("field"), "worker_id");
}

TEST_F(Claiming, FreeCapacityFiltersByCpusGpusNodesAndWalltime) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"s",
      "resources":{"nodes":2,"ranks_per_node":2,"cpus_per_rank":1,"gpus_per_rank":1},"walltime_s":600}])"));
  StartRunOrEmpty("wf");
  auto free = [](const std::string& nodes, int walltime) {
    return R"(,"free":{"nodes":)" + nodes + R"(,"walltime_s":)" + std::to_string(walltime) + "}";
  };
  const std::string two_fit = R"([{"name":"n1","cpus":2,"gpus":2},{"name":"n2","cpus":4,"gpus":2}])";
  EXPECT_TRUE(Leases(w1_->Claim("worker-1", 1, 0, free(R"([{"name":"n1","cpus":8,"gpus":8}])", 3600))).empty())
      << "one node cannot hold a 2-node step";
  EXPECT_TRUE(Leases(w1_->Claim("worker-1", 1, 0,
                                free(R"([{"name":"n1","cpus":1,"gpus":2},{"name":"n2","cpus":4,"gpus":2}])", 3600)))
                  .empty())
      << "2 ranks x 1 cpu do not fit 1 free cpu";
  EXPECT_TRUE(Leases(w1_->Claim("worker-1", 1, 0,
                                free(R"([{"name":"n1","cpus":2,"gpus":1},{"name":"n2","cpus":4,"gpus":2}])", 3600)))
                  .empty())
      << "2 ranks x 1 gpu do not fit 1 free gpu";
  EXPECT_TRUE(Leases(w1_->Claim("worker-1", 1, 0, free(two_fit, 599))).empty()) << "walltime 600 > 599 left";
  EXPECT_EQ(Leases(w1_->Claim("worker-1", 1, 0, free(two_fit, 600))).size(), 1u);
}

TEST_F(Claiming, FreeCapacityPacksSeveralOffersWithoutOverbooking) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"a","resources":{"cpus_per_rank":2}},
      {"id":"b","resources":{"cpus_per_rank":2}},{"id":"c","resources":{"cpus_per_rank":2}}])"));
  StartRunOrEmpty("wf");
  // 5 free cpus on one node: two 2-cpu steps fit, the third does not.
  auto leases = Leases(
      w1_->Claim("worker-1", 3, 0, R"(,"free":{"nodes":[{"name":"n1","cpus":5,"gpus":0}],"walltime_s":3600})"));
  ASSERT_EQ(leases.size(), 2u);
  EXPECT_EQ(leases[0].step_id, "a");
  EXPECT_EQ(leases[1].step_id, "b");
}

}  // namespace
}  // namespace scimesh::coordinator::testing

namespace scimesh::coordinator::testing {
namespace {

class ShortRequestTimeout : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.extra_args = {"--request-timeout-ms", std::to_string(scimesh::testing::Scaled(std::chrono::milliseconds(1000)).count())};
    return o;
  }
};

TEST_F(ShortRequestTimeout, AClaimIsHeldAtMostFourFifthsOfTheRequestTimeout) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  // Asks for 60 s; the coordinator holds it at most 800 ms and answers empty
  // (the test's own 60 s timeout would fail it otherwise).
  Reply r = w1_->Claim("worker-1", 1, 60000);
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(r["leases"].Size(), 0u);
}

}  // namespace
}  // namespace scimesh::coordinator::testing
