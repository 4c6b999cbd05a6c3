// Integration: keys and scopes (401/403), a lease reported on only with the
// key that claimed it (or admin), the audit log of run reads, and secrets
// that never reach the log.
#include <fstream>
#include <sstream>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

using Security = CoordinatorTest;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(Security, HealthNeedsNoKey) {
  ApiClient anonymous(process_->port(), "");
  Reply r = anonymous.Get("/v1/api/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Str("status"), "ok");
}

TEST_F(Security, NoKeyOrAnUnknownKeyIs401) {
  ApiClient anonymous(process_->port(), "");
  Reply none = anonymous.Claim("worker-1", 1, 0);
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.Str("error"), "unauthorized");
  ApiClient stranger(process_->port(), "smk_not-a-key");
  EXPECT_EQ(stranger.StartRun("wf").status, 401);
  EXPECT_EQ(stranger.Get("/v1/api/runs/r_0000000000000000").status, 401);
  Reply basic = anonymous.Raw("GET", "/v1/api/runs/r_0000000000000000", "", {{"Authorization", "Basic eDp5"}});
  EXPECT_EQ(basic.status, 401);
}

TEST_F(Security, AWorkerKeyCannotStartOrReadRuns) {
  Reply start = w1_->StartRun("wf");
  EXPECT_EQ(start.status, 403);
  EXPECT_EQ(start.Str("error"), "forbidden");
  EXPECT_EQ(w1_->Get("/v1/api/runs/r_0000000000000000").status, 403);
  EXPECT_EQ(w1_->CancelRun("r_0000000000000000").status, 403);
}

TEST_F(Security, AnExecuteKeyCannotMakeWorkerCalls) {
  EXPECT_EQ(exec_->Register("worker-1", "[]").status, 403);
  EXPECT_EQ(exec_->Claim("worker-1", 1, 0).status, 403);
  EXPECT_EQ(exec_->Heartbeat("l_0000000000000000", "worker-1", 1).status, 403);
}

TEST_F(Security, ALeaseIsReportedOnlyWithTheKeyThatClaimedItOrAdmin) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"a"},{"id":"b"}])"));
  std::string run = StartRunOrEmpty("wf");
  auto leases = Leases(w1_->Claim("worker-1", 2, 0));
  ASSERT_EQ(leases.size(), 2u);
  // Same worker_id and attempt, another worker key: 403, nothing changes.
  Reply other = w2_->Complete(leases[0].lease_id, "worker-1", 1);
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(other.Str("error"), "forbidden");
  EXPECT_EQ(w2_->Heartbeat(leases[0].lease_id, "worker-1", 1).status, 403);
  EXPECT_EQ(AttemptStatus(run, "a", 1), "leased");
  // An admin key may report on any lease.
  EXPECT_EQ(root_->Complete(leases[0].lease_id, "worker-1", 1).status, 200);
  EXPECT_EQ(w1_->Complete(leases[1].lease_id, "worker-1", 1).status, 200);
  EXPECT_EQ(RunStatus(run), "completed");
}

// The attack: a step read the worker key and could then claim other steps,
// report on other leases and read every artifact. A lease's token is
// accepted for that lease's own calls and for nothing else.
TEST_F(Security, ALeaseTokenServesItsOwnLeaseAndNothingElse) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"a"},{"id":"b"}])"));
  std::string run = StartRunOrEmpty("wf");
  auto leases = Leases(w1_->Claim("worker-1", 2, 0));
  ASSERT_EQ(leases.size(), 2u);
  const rapidjson::Value& mine = (*leases[0].json)["leases"][static_cast<rapidjson::SizeType>(leases[0].index)];
  ASSERT_TRUE(mine.HasMember("lease_token") && mine["lease_token"].IsString());
  const std::string token = mine["lease_token"].GetString();
  ApiClient step(process_->port(), token);
  // Its own lease: started, heartbeat, an upload, complete.
  EXPECT_EQ(step.Started(leases[0].lease_id, "worker-1", 1).status, 200);
  EXPECT_EQ(step.Heartbeat(leases[0].lease_id, "worker-1", 1).status, 200);
  Reply up = step.Put("/v1/api/steps/" + leases[0].lease_id + "/artifacts/out.txt?worker_id=worker-1&attempt=1",
                      "out", Sha256("out"), "text/plain");
  EXPECT_EQ(up.status, 201) << up.Describe();
  // Nothing else: another lease, claim, register, runs, downloads.
  Reply other = step.Heartbeat(leases[1].lease_id, "worker-1", 1);
  EXPECT_EQ(other.status, 401);
  EXPECT_NE(other.Str("message").find("only for its own lease"), std::string::npos) << other.body;
  EXPECT_EQ(step.Claim("worker-1", 1, 0).status, 401);
  EXPECT_EQ(step.Post("/v1/api/workers/register", R"({"worker_id":"x","host":"h","version":"1","definitions":[]})")
                .status,
            401);
  EXPECT_EQ(step.Get("/v1/api/runs/" + run).status, 401);
  EXPECT_EQ(step.Get("/v1/api/artifacts/" + Sha256("out")).status, 401);
  // A forged one: another lease's id under this MAC, or a changed MAC.
  std::string forged = token;
  forged.replace(3, leases[0].lease_id.size(), leases[1].lease_id);
  EXPECT_EQ(ApiClient(process_->port(), forged).Heartbeat(leases[1].lease_id, "worker-1", 1).status, 401);
  std::string flipped = token;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  EXPECT_EQ(ApiClient(process_->port(), flipped).Heartbeat(leases[0].lease_id, "worker-1", 1).status, 401);
  // The body's worker and attempt are still checked.
  EXPECT_EQ(step.Heartbeat(leases[0].lease_id, "worker-2", 1).Str("reason"), "fenced");
  EXPECT_EQ(step.Complete(leases[0].lease_id, "worker-1", 1).status, 200);
  EXPECT_EQ(step.Complete(leases[0].lease_id, "worker-1", 1).Str("reason"), "already_applied");
  // The token is never logged.
  EXPECT_EQ(process_->log().find(token.substr(token.rfind('_') + 1)), std::string::npos);
}

TEST_F(Security, ReadsOfRunsAreAuditedAndWorkerCallsAreNot) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Heartbeat(l.lease_id, "worker-1", 1).status, 200);
  ASSERT_EQ(exec_->ShowRun(run).status, 200);
  ASSERT_EQ(exec_->Journal(run).status, 200);
  ASSERT_EQ(exec_->Get("/v1/api/runs/r_0000000000000000").status, 404);
  std::string audit = Slurp(process_->db() + ".audit.log");
  std::vector<std::string> lines;
  std::istringstream in(audit);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // The run's start, then the three reads.
  ASSERT_EQ(lines.size(), 4u) << audit;
  EXPECT_NE(lines[0].find("\"method\":\"POST\""), std::string::npos) << lines[0];
  rapidjson::Document first;
  first.Parse(lines[1].c_str());
  ASSERT_FALSE(first.HasParseError());
  EXPECT_STREQ(first["key"].GetString(), "exec");
  EXPECT_STREQ(first["method"].GetString(), "GET");
  EXPECT_EQ(std::string(first["path"].GetString()), "/v1/api/runs/" + run);
  EXPECT_EQ(first["status"].GetInt(), 200);
  EXPECT_TRUE(first["time"].IsString());
  EXPECT_NE(lines[3].find("\"status\":404"), std::string::npos);
  EXPECT_EQ(audit.find("claim"), std::string::npos);
  EXPECT_EQ(audit.find("heartbeat"), std::string::npos);
}

TEST_F(Security, SecretsNeverReachTheLogOrTheKeysFile) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  StartRunOrEmpty("wf");
  ClaimOne(*w1_, "worker-1");
  ApiClient stranger(process_->port(), "smk_wrong-secret-value");
  EXPECT_EQ(stranger.Claim("worker-1", 1, 0).status, 401);
  std::string log = process_->log();
  std::string keys = Slurp(process_->keys_file());
  for (const char* name : {"w1", "w2", "exec", "root"}) {
    EXPECT_EQ(log.find(process_->token(name)), std::string::npos) << name;
    EXPECT_EQ(keys.find(process_->token(name)), std::string::npos) << name;
  }
  EXPECT_EQ(log.find("wrong-secret-value"), std::string::npos);
  EXPECT_EQ(log.find(process_->dir()), std::string::npos) << "no full local paths in the log";
}

}  // namespace
}  // namespace scimesh::coordinator::testing
