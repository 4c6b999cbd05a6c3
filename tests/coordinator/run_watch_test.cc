// Integration: `scimesh-coordinator run watch` says what a person waits for
// while it happens: a running attempt's progress, a step no worker can fit,
// and, when the coordinator cannot be reached, that it cannot, while it is
// still retrying (not after its 60 s budget).
#include "cli_process.h"
#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

class RunWatch : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.lease_ttl_ms = 30000;  // the lease outlives the test's pauses
    o.heartbeat_ms = 10000;
    o.grace_ms = 30000;
    return o;
  }
  std::map<std::string, std::string> Env(const std::string& url) const {
    return {{"SCIMESH_URL", url}, {"SCIMESH_TOKEN_FILE", process_->token_file("exec")}};
  }
};

TEST_F(RunWatch, AWrongUrlIsSaidWhileWatchIsStillRetrying) {
  // Port 1 on loopback: nothing listens, every connect is refused at once.
  CliProcess watch({"run", "watch", "r_0123456789abcdef"}, Env("http://127.0.0.1:1"));
  // Before, watch said nothing until it gave up after 60 s; the bound here
  // is half that, so only a watch that speaks while retrying passes.
  ASSERT_TRUE(watch.AwaitOutput("(retrying, 0 s so far)", 30000)) << watch.output();
  EXPECT_TRUE(watch.Running()) << "the line came when watch gave up: " << watch.output();
  const std::string said = "scimesh-coordinator run watch: cannot reach http://127.0.0.1:1 (retrying, 0 s so far): ";
  EXPECT_NE(watch.output().find(said), std::string::npos)
      << watch.output();
}

TEST_F(RunWatch, ProgressAndAnUnfittableStepAreShownAsTheyArrive) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"small"},{"id":"big","resources":{"nodes":2}}])"));
  const std::string run = StartRunOrEmpty("wf");
  CliProcess watch({"run", "watch", run}, Env(process_->url()));
  // One node free: "small" is taken, "big" can never fit this worker.
  LeaseRef small = ClaimOne(*w1_, "worker-1", 5000,
                            R"(,"free":{"nodes":[{"name":"n1","cpus":4,"gpus":0}],"walltime_s":3600})");
  ASSERT_EQ(small.step_id, "small");
  ASSERT_TRUE(watch.AwaitOutput("unfittable  step big #-  no worker can fit: needs 2 nodes, largest offer 1", 20000))
      << watch.output();
  ASSERT_EQ(w1_->Started(small.lease_id, "worker-1", 1).status, 200);
  for (const char* progress : {R"({"done":0.25,"message":"meshing"})", R"({"done":0.5,"message":"solving"})"}) {
    Reply beat = w1_->Post("/v1/api/steps/" + small.lease_id + "/heartbeat",
                           R"({"worker_id":"worker-1","attempt":1,"progress":)" + std::string(progress) + "}");
    ASSERT_EQ(beat.status, 200) << beat.Describe();
    ASSERT_TRUE(watch.AwaitOutput(std::string("progress  step small #1  ") + progress, 20000)) << watch.output();
  }
  EXPECT_TRUE(watch.Running());
  ASSERT_EQ(exec_->CancelRun(run).status, 200);
  EXPECT_EQ(watch.Wait(), 1) << watch.output();
  EXPECT_NE(watch.output().find("run " + run + ": cancelled"), std::string::npos) << watch.output();
  // Each is said once, not at every poll.
  const std::string& out = watch.output();
  EXPECT_EQ(out.find("no worker can fit"), out.rfind("no worker can fit")) << out;
}

TEST_F(RunWatch, ARunThatDoesNotExistIsARefusalNotARetry) {
  CliProcess watch({"run", "watch", "r_0123456789abcdef"}, Env(process_->url()));
  EXPECT_EQ(watch.Wait(), 1) << watch.output();
  EXPECT_EQ(watch.output().find("retrying"), std::string::npos) << watch.output();
}

}  // namespace
}  // namespace scimesh::coordinator::testing
