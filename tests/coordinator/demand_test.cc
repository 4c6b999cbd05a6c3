// Integration: GET /v1/api/demand on the real coordinator — counts per step
// as a run moves and what a claiming worker's `free` could take; the scopes; a
// bad `workflow` named; another key's workflow left out, or refused with 403
// `not_owner` (audited) when named.
#include <fstream>
#include <sstream>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

class Demand : public CoordinatorTest {
 protected:
  // "workflow/step:runnable/waiting/running/claimable" per group, in order.
  static std::vector<std::string> Groups(const Reply& r) {
    std::vector<std::string> out;
    if (!r["groups"].IsArray()) return out;
    for (const auto& g : r["groups"].GetArray()) {
      const auto& c = g["claimable_by_live_workers"];
      out.push_back(std::string(g["workflow"].GetString()) + "/" + g["step_id"].GetString() + ":" +
                    std::to_string(g["runnable"].GetInt64()) + "/" + std::to_string(g["waiting"].GetInt64()) + "/" +
                    std::to_string(g["running"].GetInt64()) + "/" +
                    (c.IsNull() ? std::string("null") : std::to_string(c.GetInt64())));
    }
    return out;
  }
  using Lines = std::vector<std::string>;
};

TEST_F(Demand, CountsMoveAsAStepIsClaimedAndTheClaimsFreeSaysWhatFits) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"a","resources":{"nodes":2}},
      {"id":"b","needs":["a"]}])"));
  StartRunOrEmpty("wf");
  StartRunOrEmpty("wf");
  Reply r = w1_->Get("/v1/api/demand");
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(Groups(r), (Lines{"wf/a:2/0/0/0", "wf/b:0/2/0/0"}));
  EXPECT_FALSE(r["more"].IsTrue());
  EXPECT_FALSE(r.Str("at").empty());

  // Idle, it offers 2 nodes of 1 cpu: one "a" at a time.
  const std::string free = R"(,"free":{"nodes":[{"name":"n1","cpus":1,"gpus":0},{"name":"n2","cpus":1,"gpus":0}],)"
                           R"("walltime_s":3600})";
  ASSERT_EQ(Leases(w1_->Claim("worker-1", 1, 0, free)).size(), 1u);
  r = w1_->Get("/v1/api/demand?workflow=wf");
  EXPECT_EQ(Groups(r), (Lines{"wf/a:1/0/1/1", "wf/b:0/2/0/0"}));
  EXPECT_EQ(r["groups"][0]["live_workers"].GetInt64(), 1);
  EXPECT_TRUE(r["groups"][0]["unfittable"].IsNull());
}

TEST_F(Demand, OnlyWorkerKeysAndWellFormedNamesAreAnswered) {
  EXPECT_EQ(exec_->Get("/v1/api/demand").status, 403);
  EXPECT_EQ(ApiClient(process_->port(), "nonsense").Get("/v1/api/demand").status, 401);
  for (const char* query : {"workflow=..", "workflow=a,,b", "workflow="}) {
    Reply r = w1_->Get(std::string("/v1/api/demand?") + query);
    EXPECT_EQ(r.status, 400) << query;
    EXPECT_EQ(r.Str("field"), "workflow") << query << ": " << r.Describe();
  }
  EXPECT_EQ(root_->Get("/v1/api/demand?unknown=1").status, 200);
}

TEST_F(Demand, AnotherKeysWorkflowIsLeftOutAndRefusedWhenNamed) {
  RegisterOrDie(*w1_, "worker-1", Definitions("mine", OneStep()));
  RegisterOrDie(*Client("w3"), "worker-3", Definitions("theirs", OneStep()));
  StartRunOrEmpty("mine");
  StartRunOrEmpty("theirs");
  EXPECT_EQ(Groups(w1_->Get("/v1/api/demand")), (Lines{"mine/s:1/0/0/0"}));
  EXPECT_EQ(Groups(w2_->Get("/v1/api/demand")), (Lines{"mine/s:1/0/0/0", "theirs/s:1/0/0/0"})) << "workflows=*";
  Reply refused = w1_->Get("/v1/api/demand?workflow=mine,theirs");
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.Str("error"), "not_owner") << refused.Describe();
  std::ifstream in(process_->db() + ".audit.log");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find(R"("key":"w1","method":"GET","path":"/v1/api/demand","status":403)"), std::string::npos)
      << ss.str();
}

}  // namespace
}  // namespace scimesh::coordinator::testing
