// Integration: what a step reported is visible to people: each attempt's
// last heartbeated `progress` and the `usage` it completed with, where its
// directory is, and why a run and its steps failed, in `run show` (text and
// --json), the run API and the journal.
#include <map>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

class RunReport : public CoordinatorTest {
 protected:
  int Cli(const std::vector<std::string>& args, std::string* out) {
    return process_->RunCli(args, {{"SCIMESH_URL", process_->url()}, {"SCIMESH_TOKEN_FILE", process_->token_file("exec")}},
                            out);
  }
  Reply Beat(const LeaseRef& l, int64_t attempt, const std::string& progress) {
    return w1_->Post("/v1/api/steps/" + l.lease_id + "/heartbeat",
                     R"({"worker_id":"worker-1","attempt":)" + std::to_string(attempt) + R"(,"progress":)" + progress +
                         "}");
  }
  // The detail of the run's first event of `type`, as compact JSON text ("" if none).
  std::string DetailOf(const std::string& run, const std::string& type) {
    Reply j = exec_->Journal(run);
    if (!j["events"].IsArray()) return "";
    for (const auto& e : j["events"].GetArray()) {
      if (std::string(e["type"].GetString()) != type) continue;
      rapidjson::StringBuffer buf;
      rapidjson::Writer<rapidjson::StringBuffer> w(buf);
      e["detail"].Accept(w);
      return buf.GetString();
    }
    return "";
  }
};

TEST_F(RunReport, LastProgressAndUsageOfEachAttemptAreShownAndJournalled) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":2)")));
  const std::string run = StartRunOrEmpty("wf");

  // Attempt 1 heartbeats twice and fails: its last progress is kept.
  LeaseRef first = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(first.lease_id, "worker-1", 1).status, 200);
  ASSERT_EQ(Beat(first, 1, R"({"iter":10})").status, 200);
  ASSERT_EQ(Beat(first, 1, R"({"iter":20,"residual":0.5})").status, 200);
  ASSERT_EQ(w1_->Fail(first.lease_id, "worker-1", 1, "retryable", "diverged").status, 200);

  // Attempt 2 heartbeats and completes with usage.
  LeaseRef second = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(second.attempt, 2);
  ASSERT_EQ(w1_->Started(second.lease_id, "worker-1", 2).status, 200);
  ASSERT_EQ(Beat(second, 2, R"({"iter":99})").status, 200);
  ASSERT_EQ(w1_->Complete(second.lease_id, "worker-1", 2, "{}", R"(,"usage":{"cpu_s":12.5})").status, 200);

  Reply show = exec_->ShowRun(run);
  ASSERT_EQ(show.status, 200);
  const auto& attempts = show["steps"][0]["attempts"];
  ASSERT_EQ(attempts.Size(), 2u);
  EXPECT_EQ(attempts[0]["progress"]["iter"].GetInt(), 20);
  EXPECT_TRUE(attempts[0]["usage"].IsNull());
  EXPECT_EQ(attempts[1]["progress"]["iter"].GetInt(), 99);
  EXPECT_EQ(attempts[1]["usage"]["cpu_s"].GetDouble(), 12.5);

  EXPECT_EQ(DetailOf(run, "attempt_failed"),
            R"({"class":"retryable","message":"diverged","progress":{"iter":20,"residual":0.5}})");
  EXPECT_EQ(DetailOf(run, "attempt_completed"), R"({"progress":{"iter":99},"usage":{"cpu_s":12.5}})");

  std::string out;
  ASSERT_EQ(Cli({"run", "show", run}, &out), 0) << out;
  // Every attempt: its status and error, where its directory is (the host
  // its worker registered with), what it reported.
  EXPECT_NE(out.find("#1  failed (retryable: diverged)  dir localhost:<spool>/" + run +
                     R"(/s/1  progress {"iter":20,"residual":0.5})"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("#2  completed  dir localhost:<spool>/" + run +
                     R"(/s/2  progress {"iter":99}  usage {"cpu_s":12.5})"),
            std::string::npos)
      << out;
  ASSERT_EQ(Cli({"run", "show", run, "--json"}, &out), 0) << out;
  EXPECT_NE(out.find(R"("usage":{"cpu_s":12.5})"), std::string::npos) << out;
  ASSERT_EQ(Cli({"run", "watch", run}, &out), 0) << out;
  EXPECT_NE(out.find(R"("usage":{"cpu_s":12.5})"), std::string::npos) << out;
}

TEST_F(RunReport, AFailedRunNamesWhyForTheRunAndEveryStepThatDidNotComplete) {
  RegisterOrDie(*w1_, "worker-1",
                Definitions("pi", R"([{"id":"pi-a","input":{"n":"{{input.n}}"}},{"id":"pi-b","needs":["pi-a"]}])"));
  const std::string run = StartRunOrEmpty("pi", R"({"m":5})");
  std::string out;
  ASSERT_EQ(Cli({"run", "show", run}, &out), 0) << out;
  EXPECT_NE(out.find("  failed: step pi-a failed: fatal: input template: 'input.n' not found\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("step pi-a  failed (fatal: input template: 'input.n' not found)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("step pi-b  cancelled (cancelled: never ran: it needs step pi-a, which failed)\n"),
            std::string::npos)
      << out;
  ASSERT_EQ(Cli({"run", "show", run, "--json"}, &out), 0) << out;
  rapidjson::Document doc;
  ASSERT_FALSE(doc.Parse(out.c_str()).HasParseError()) << out;
  EXPECT_STREQ(doc["reason"].GetString(), "step pi-a failed: fatal: input template: 'input.n' not found");
  EXPECT_STREQ(doc["steps"][0]["error"]["class"].GetString(), "fatal");
  EXPECT_STREQ(doc["steps"][0]["error"]["message"].GetString(), "input template: 'input.n' not found");
  EXPECT_EQ(doc["steps"][0]["attempts"].Size(), 0u);
  EXPECT_STREQ(doc["steps"][1]["error"]["class"].GetString(), "cancelled");
}

TEST_F(RunReport, AnAttemptThatReportedNothingShowsNull) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  const std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Complete(l.lease_id, "worker-1", 1).status, 200);
  Reply show = exec_->ShowRun(run);
  EXPECT_TRUE(show["steps"][0]["attempts"][0]["progress"].IsNull());
  EXPECT_TRUE(show["steps"][0]["attempts"][0]["usage"].IsNull());
  EXPECT_EQ(DetailOf(run, "attempt_completed"), "{}");
}

}  // namespace
}  // namespace scimesh::coordinator::testing
