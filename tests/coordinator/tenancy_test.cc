// Integration: tenancy — a worker_id belongs to the key that registered it,
// a workflow to the key that registered it first (or to the keys whose
// `workflows=` globs match it), a run to the key that started it; admin and
// read keys see every run. Every refusal is a 403 `not_owner`.
#include <fstream>
#include <sstream>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

class Tenancy : public CoordinatorTest {
 protected:
  void SetUp() override {
    CoordinatorTest::SetUp();
    w3_ = Client("w3");
    exec2_ = Client("exec2");
    reader_ = Client("reader");
  }
  static void ExpectNotOwner(const Reply& r) {
    EXPECT_EQ(r.status, 403) << r.Describe();
    EXPECT_EQ(r.Str("error"), "not_owner") << r.Describe();
  }
  std::vector<std::string> AuditLines() {
    std::ifstream in(process_->db() + ".audit.log");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  std::unique_ptr<ApiClient> w3_, exec2_, reader_;
};

TEST_F(Tenancy, AnotherKeyCannotRegisterAWorkerIdOrClaimAsIt) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  // w3 may register workflows of its own, but not as worker-1: that would
  // wipe worker-1's definitions and let w3 claim in its name.
  ExpectNotOwner(w3_->Register("worker-1", Definitions("mine", OneStep())));
  std::string run = StartRunOrEmpty("wf");
  ExpectNotOwner(w3_->Claim("worker-1", 1, 0));
  EXPECT_EQ(StepStatus(run, "s"), "queued");
  // worker-1 still holds its definitions, and its own key still claims.
  LeaseRef l = ClaimOne(*w1_, "worker-1", 0);
  EXPECT_EQ(l.step_id, "s");
  // Nor can w3 report on worker-1's lease.
  EXPECT_EQ(w3_->Heartbeat(l.lease_id, "worker-1", 1).status, 403);
  EXPECT_EQ(w3_->Complete(l.lease_id, "worker-1", 1).status, 403);
  EXPECT_EQ(AttemptStatus(run, "s", 1), "leased");
  // An admin key may act as any worker; the worker_id stays w1's.
  RegisterOrDie(*root_, "worker-1", Definitions("wf", OneStep()));
  ExpectNotOwner(w3_->Register("worker-1", Definitions("mine", OneStep())));
}

TEST_F(Tenancy, AKeyCannotSquatAnotherKeysWorkflow) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  // The same (workflow, version), and a new version of it: both w1's.
  ExpectNotOwner(w3_->Register("worker-3", Definitions("wf", OneStep())));
  ExpectNotOwner(w3_->Register("worker-3", Definitions("wf", OneStep(), "2")));
  // Nothing of the refused registration was kept: version 2 does not exist.
  EXPECT_EQ(exec_->StartRun("wf", "{}", R"(,"version":"2")").status, 404);
  // A workflow nobody had becomes w3's, and then w1 cannot take it.
  RegisterOrDie(*w3_, "worker-3", Definitions("own", OneStep()));
  ExpectNotOwner(w1_->Register("worker-1", Definitions("own", OneStep())));
  // w2's key says `workflows=*`: the site let it serve any workflow.
  RegisterOrDie(*w2_, "worker-2", Definitions("wf", OneStep()));
}

TEST_F(Tenancy, AnAdminKeyMayPreRegisterAWorkflowForKeysWithAGlob) {
  RegisterOrDie(*root_, "admin-0", Definitions("pre", OneStep()));
  std::string run = StartRunOrEmpty("pre");
  ExpectNotOwner(w1_->Register("worker-1", Definitions("pre", OneStep())));
  RegisterOrDie(*w2_, "worker-2", Definitions("pre", OneStep()));
  LeaseRef l = ClaimOne(*w2_, "worker-2", 0);
  EXPECT_EQ(l.run_id, run);
}

TEST_F(Tenancy, ARunIsReadWatchedAndCancelledOnlyByItsKeyOrAdmin) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  ExpectNotOwner(exec2_->ShowRun(run));
  ExpectNotOwner(exec2_->Journal(run));
  ExpectNotOwner(exec2_->CancelRun(run));
  EXPECT_EQ(RunStatus(run), "running");
  // `run watch` is show in a loop: the CLI with exec2's key is refused too.
  std::string out;
  EXPECT_NE(process_->RunCli({"run", "show", run},
                             {{"SCIMESH_URL", process_->url()}, {"SCIMESH_TOKEN_FILE", process_->token_file("exec2")}},
                             &out),
            0);
  EXPECT_EQ(out.find("\"workflow\""), std::string::npos) << out;
  // Unknown runs stay 404 for everybody.
  EXPECT_EQ(exec2_->ShowRun("r_0000000000000000").status, 404);
  // Admin and read keys see every run; a read key changes nothing.
  EXPECT_EQ(root_->ShowRun(run).status, 200);
  EXPECT_EQ(reader_->ShowRun(run).status, 200);
  EXPECT_EQ(reader_->Journal(run).status, 200);
  Reply no = reader_->CancelRun(run);
  EXPECT_EQ(no.status, 403);
  EXPECT_EQ(no.Str("error"), "forbidden");
  EXPECT_EQ(reader_->StartRun("wf").status, 403);
  // Its own key cancels it.
  Reply cancel = exec_->CancelRun(run);
  EXPECT_EQ(cancel.status, 200) << cancel.Describe();
  EXPECT_EQ(cancel.Str("status"), "cancelled");
}

TEST_F(Tenancy, AnotherKeysArtifactsCannotBeDownloaded) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1", 0);
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  const std::string bytes = "results of exec's run";
  Reply up = w1_->Put("/v1/api/steps/" + l.lease_id + "/artifacts/out.txt?worker_id=worker-1&attempt=1", bytes,
                      Sha256(bytes));
  ASSERT_EQ(up.status, 201) << up.Describe();
  const std::string path = "/v1/api/artifacts/" + Sha256(bytes);
  EXPECT_EQ(exec_->Get(path).body, bytes);
  // Attack: another tenant probes a digest. It learns nothing: the answer is
  // the one of a digest that is not there at all.
  Reply other = exec2_->Get(path);
  Reply absent = exec2_->Get("/v1/api/artifacts/" + Sha256("bytes nobody uploaded"));
  EXPECT_EQ(other.status, 404) << other.Describe();
  EXPECT_EQ(absent.status, 404) << absent.Describe();
  EXPECT_EQ(other.Str("error"), absent.Str("error"));
  EXPECT_EQ(other.body.find(bytes), std::string::npos);
  EXPECT_EQ(reader_->Get(path).body, bytes);
  EXPECT_EQ(root_->Get(path).body, bytes);
}

TEST_F(Tenancy, StartsCancelsAndFailedAuthenticationsAreAuditedWithoutSecrets) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  ASSERT_EQ(exec_->CancelRun(run).status, 200);
  ApiClient stranger(process_->port(), "smk_wrong-secret-value");
  EXPECT_EQ(stranger.ShowRun(run).status, 401);
  ExpectNotOwner(w3_->Register("worker-1", Definitions("wf", OneStep())));
  std::vector<std::string> lines = AuditLines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find(R"("key":"exec","method":"POST","path":"/v1/api/runs","status":201,"run_id":")" + run),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(R"("key":"exec","method":"POST","path":"/v1/api/runs/)" + run + R"(/cancel","status":200)"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find(R"("key":null,"method":"GET","path":"/v1/api/runs/)" + run + R"(","status":401,"peer":"127.0.0.1")"),
            std::string::npos)
      << lines[2];
  EXPECT_NE(lines[3].find(R"("key":"w3","method":"POST","path":"/v1/api/workers/register","status":403)"),
            std::string::npos)
      << lines[3];
  std::stringstream all;
  for (const auto& line : lines) all << line << "\n";
  EXPECT_EQ(all.str().find("wrong-secret-value"), std::string::npos);
  for (const char* name : {"w1", "w3", "exec"}) EXPECT_EQ(all.str().find(process_->token(name)), std::string::npos);
}

}  // namespace
}  // namespace scimesh::coordinator::testing
