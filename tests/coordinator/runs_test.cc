// Integration: runs over time and for people — the run deadline, newest
// version by default, and the command line (keys add; run start, show,
// watch, cancel) as a user runs it.
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

using Runs = CoordinatorTest;

TEST_F(Runs, PastItsDeadlineARunTimesOutAndItsLeasesAnswerRunTerminal) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf", "{}", R"(,"deadline_s":1)");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  Reply show = exec_->ShowRun(run);
  EXPECT_TRUE(show["deadline_at"].IsString());
  // Keep the lease alive until the deadline passes: the answer changes from
  // 200 to run_terminal.
  std::string reason;
  for (int i = 0; i < 50 && reason.empty(); ++i) {
    Reply beat = w1_->Heartbeat(l.lease_id, "worker-1", 1);
    if (beat.status != 200) reason = beat.Str("reason");
    if (reason.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(reason, "run_terminal");
  EXPECT_EQ(RunStatus(run), "timed_out");
  EXPECT_EQ(AttemptStatus(run, "s", 1), "cancelled");
  EXPECT_EQ(CountEvents(run, "run_timed_out"), 1);
}

TEST_F(Runs, WithoutAVersionTheNewestRegisteredIsUsed) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("walltime_s":10)"), "1"));
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("walltime_s":20)"), "2"));
  std::string run = StartRunOrEmpty("wf");
  EXPECT_EQ(exec_->ShowRun(run).Str("version"), "2");
  Reply v1 = exec_->StartRun("wf", "{}", R"(,"version":"1")");
  ASSERT_EQ(v1.status, 201);
  EXPECT_EQ(exec_->ShowRun(v1.Str("run_id")).Str("version"), "1");
  EXPECT_EQ(exec_->StartRun("wf", "{}", R"(,"version":"3")").status, 404);
}

TEST_F(Runs, KeysAddPrintsOnlyTheNameAndWritesPrivateFiles) {
  std::string out;
  const std::string secret_file = process_->dir() + "/ops.token";
  int rc = process_->RunCli({"keys", "add", "ops", "--scope", "execute,admin", "--keys", process_->keys_file(),
                             "--secret-out", secret_file},
                            {}, &out);
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(out, "added key ops (execute,admin)\n");
  std::ifstream in(secret_file);
  std::string secret;
  std::getline(in, secret);
  ASSERT_FALSE(secret.empty());
  EXPECT_EQ(out.find(secret), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(secret_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The running coordinator picks the new key up (it re-reads a changed
  // keys file within a second): await the first answer that is not 401.
  ApiClient ops(process_->port(), secret);
  EXPECT_TRUE(Await([&] { return std::to_string(ops.ShowRun("r_0000000000000000").status); }, "404"));
}

class RunCli : public CoordinatorTest {
 protected:
  std::map<std::string, std::string> Env() const {
    return {{"SCIMESH_URL", process_->url()}, {"SCIMESH_TOKEN_FILE", process_->token_file("exec")}};
  }
  int Cli(const std::vector<std::string>& args, std::string* out) { return process_->RunCli(args, Env(), out); }
};

TEST_F(RunCli, StartShowWatchUntilCompleted) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string out;
  ASSERT_EQ(Cli({"run", "start", "--workflow", "wf", "--input", R"({"n":4})", "--correlation", R"({"t":1})"}, &out),
            0);
  ASSERT_EQ(out.size(), 19u) << out;  // "r_" + 16 hex + newline, nothing else
  std::string run = out.substr(0, 18);
  EXPECT_EQ(exec_->ShowRun(run).Str("status"), "running");

  ASSERT_EQ(Cli({"run", "show", run}, &out), 0);
  EXPECT_NE(out.find("run " + run), std::string::npos) << out;
  EXPECT_NE(out.find("step s  queued"), std::string::npos) << out;
  ASSERT_EQ(Cli({"run", "show", run, "--json"}, &out), 0);
  rapidjson::Document doc;
  ASSERT_FALSE(doc.Parse(out.c_str()).HasParseError()) << out;
  EXPECT_EQ(std::string(doc["run_id"].GetString()), run);

  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Complete(l.lease_id, "worker-1", 1).status, 200);
  ASSERT_EQ(Cli({"run", "watch", run}, &out), 0) << out;
  EXPECT_NE(out.find("attempt_leased  step s #1  worker worker-1"), std::string::npos) << out;
  EXPECT_NE(out.find("run " + run + ": completed"), std::string::npos) << out;
}

TEST_F(RunCli, CancelAndWatchOfARunThatDidNotComplete) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  std::string out;
  ASSERT_EQ(Cli({"run", "cancel", run}, &out), 0);
  EXPECT_EQ(out, "run " + run + ": cancelled\n");
  EXPECT_EQ(Cli({"run", "watch", run}, &out), 1);
  EXPECT_NE(out.find("run " + run + ": cancelled"), std::string::npos) << out;
}

TEST_F(RunCli, RefusalsAndUsageErrorsHaveTheirExitStatus) {
  std::string out;
  EXPECT_EQ(Cli({"run", "show", "r_0123456789abcdef"}, &out), 1);
  EXPECT_EQ(Cli({"run", "start", "--workflow", "never", "--input", "{}"}, &out), 1);
  EXPECT_EQ(Cli({"run", "start", "--workflow", "wf", "--input", "{not json"}, &out), 2);
  EXPECT_EQ(Cli({"run", "frobnicate", "r_0123456789abcdef"}, &out), 2);
  EXPECT_EQ(process_->RunCli({"run", "show", "r_0123456789abcdef"}, {{"SCIMESH_URL", process_->url()}}, &out), 2)
      << "no token";
  EXPECT_EQ(process_->RunCli({"run", "show", "r_0123456789abcdef"},
                             {{"SCIMESH_URL", process_->url()}, {"SCIMESH_TOKEN_FILE", process_->token_file("w1")}},
                             &out),
            1)
      << "a worker key cannot read runs";
  EXPECT_EQ(process_->RunCli({"run", "show", "r_0123456789abcdef"},
                             {{"SCIMESH_URL", "http://127.0.0.1:1"}, {"SCIMESH_TOKEN", process_->token("exec")}}, &out),
            3);
}

TEST_F(RunCli, HelpNamesEveryServeFlag) {
  std::string out;
  ASSERT_EQ(process_->RunCli({"serve", "--help"}, {}, &out), 0);
  for (const char* flag : {"--db", "--listen", "--port-file", "--keys", "--artifact-dir", "--public-url",
                           "--lease-ttl-ms", "--heartbeat-ms", "--grace-ms", "--retry-base-ms", "--retry-cap-ms",
                           "--request-timeout-ms", "--max-body", "--max-artifact", "--audit-log", "--threads",
                           "--config"}) {
    EXPECT_NE(out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace scimesh::coordinator::testing
