// Integration: docs/protocol/*.json against the real coordinator. Every
// example request is sent as written (the example worker, and --public-url
// http://127.0.0.1:8470 so the example artifact URI is the issued one), and
// every real response must have the example's field names and JSON types.
// Together with requests_test.cc this keeps the document and the code from
// drifting apart.
#include <dirent.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

constexpr char kWorker[] = "scimesh-dev/42/n1";

std::string Example(const std::string& name) {
  std::ifstream in(std::string(SCIMESH_PROTOCOL_EXAMPLES) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Members whose content is free-form JSON: only their type is compared.
const std::set<std::string> kFreeForm = {"input", "output", "state", "previous", "run_state",
                                         "correlation", "detail", "usage", "progress"};
// Members that may be null where the example shows a value.
const std::set<std::string> kNullable = {"finished_at", "deadline_at", "started_at", "ended_at", "error",
                                         "output", "step_id", "attempt", "worker_id", "correlation", "progress",
                                         "usage", "reason", "host", "claimable_by_live_workers"};

bool SameType(const rapidjson::Value& a, const rapidjson::Value& b) {
  auto kind = [](const rapidjson::Value& v) { return v.IsBool() ? rapidjson::kTrueType : v.GetType(); };
  return kind(a) == kind(b);
}

void CompareShape(const rapidjson::Value& example, const rapidjson::Value& actual, const std::string& path,
                  const std::string& member, std::vector<std::string>& diffs) {
  if (example.IsNull()) return;  // the example shows no type: any value
  if (actual.IsNull() && kNullable.count(member)) return;
  if (!SameType(example, actual)) {
    diffs.push_back(path + ": type differs from the example");
    return;
  }
  if (kFreeForm.count(member)) return;
  if (example.IsObject()) {
    for (auto it = example.MemberBegin(); it != example.MemberEnd(); ++it) {
      std::string name = it->name.GetString();
      std::string at = path;
      at.append(".").append(name);
      auto found = actual.FindMember(it->name);
      if (found == actual.MemberEnd()) {
        diffs.push_back(at + ": missing");
        continue;
      }
      CompareShape(it->value, found->value, at, name, diffs);
    }
    for (auto it = actual.MemberBegin(); it != actual.MemberEnd(); ++it) {
      if (!example.HasMember(it->name))
        diffs.push_back(std::string(path).append(".").append(it->name.GetString()).append(": not in the example"));
    }
  } else if (example.IsArray() && !example.Empty()) {
    for (rapidjson::SizeType i = 0; i < actual.Size(); ++i) {
      CompareShape(example[0], actual[i], path + "[" + std::to_string(i) + "]", member, diffs);
    }
  }
}

void ExpectShapeOf(const std::string& example_file, const Reply& actual) {
  rapidjson::Document example;
  ASSERT_FALSE(example.Parse(Example(example_file).c_str()).HasParseError()) << example_file;
  ASSERT_TRUE(actual.json != nullptr);
  std::vector<std::string> diffs;
  CompareShape(example, *actual.json, "", "", diffs);
  std::string all;
  for (const auto& d : diffs) all += "\n  " + d;
  EXPECT_TRUE(diffs.empty()) << example_file << " vs the real response " << actual.body << all;
}

// Replaces the example's run_id with `run_id` (the example names one run).
std::string WithRun(const std::string& text, const std::string& run_id) {
  return std::regex_replace(text, std::regex("r_6f1c2a9e0b7d4c35"), run_id);
}

class Contract : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.lease_ttl_ms = 30000;  // nothing expires while the examples are sent
    o.heartbeat_ms = 10000;
    o.grace_ms = 30000;
    o.extra_args = {"--public-url", "http://127.0.0.1:8470"};
    return o;
  }
};

TEST_F(Contract, EveryExampleRequestIsAcceptedAndEveryResponseHasTheExampleShape) {
  Reply reg = w1_->Post("/v1/api/workers/register", Example("register.request.json"));
  ASSERT_EQ(reg.status, 200) << reg.Describe();
  ExpectShapeOf("register.response.json", reg);

  Reply created = exec_->Post("/v1/api/runs", Example("run.create.request.json"));
  ASSERT_EQ(created.status, 201) << created.Describe();
  ExpectShapeOf("run.create.response.json", created);
  const std::string run = created.Str("run_id");

  // solve-16: claim (the example's free capacity fits it), started, heartbeat,
  // the example artifact, complete as in the example.
  Reply claim = w1_->Post("/v1/api/steps/claim", WithRun(Example("claim.request.json"), run));
  ASSERT_EQ(claim.status, 200) << claim.Describe();
  auto leases = Leases(claim);
  ASSERT_EQ(leases.size(), 1u);
  ASSERT_EQ(leases[0].step_id, "solve-16");
  const std::string solve = leases[0].lease_id;
  Reply started = w1_->Post("/v1/api/steps/" + solve + "/started", Example("started.request.json"));
  ASSERT_EQ(started.status, 200) << started.Describe();
  ExpectShapeOf("started.response.json", started);
  Reply beat = w1_->Post("/v1/api/steps/" + solve + "/heartbeat", Example("heartbeat.request.json"));
  ASSERT_EQ(beat.status, 200) << beat.Describe();
  ExpectShapeOf("heartbeat.response.json", beat);
  Reply up = w1_->Put("/v1/api/steps/" + solve + "/artifacts/convergence.txt?worker_id=scimesh-dev/42/n1&attempt=1",
                      "foo", "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae", "text/plain");
  ASSERT_EQ(up.status, 201) << up.Describe();
  ExpectShapeOf("artifact.response.json", up);
  rapidjson::Document example_up;
  example_up.Parse(Example("artifact.response.json").c_str());
  EXPECT_EQ(up.Str("uri"), example_up["uri"].GetString()) << "the example URI is the issued one";
  Reply done = w1_->Post("/v1/api/steps/" + solve + "/complete", Example("complete.request.json"));
  ASSERT_EQ(done.status, 200) << done.Describe();
  ExpectShapeOf("complete.response.json", done);

  // report: a lease with previous outputs and input artifacts, like the example.
  Reply claim2 = w1_->Post("/v1/api/steps/claim", WithRun(Example("claim.request.json"), run));
  ASSERT_EQ(Leases(claim2).size(), 1u);
  EXPECT_EQ(Leases(claim2)[0].step_id, "report");
  ExpectShapeOf("claim.response.json", claim2);
  EXPECT_EQ(claim2["leases"][0]["input_artifacts"].Size(), 1u);

  Reply show = exec_->ShowRun(run);
  ASSERT_EQ(show.status, 200);
  ExpectShapeOf("run.show.response.json", show);
  Reply journal = exec_->Journal(run);
  ASSERT_EQ(journal.status, 200);
  ExpectShapeOf("run.journal.response.json", journal);
  Reply list = exec_->Get("/v1/api/runs");
  ASSERT_EQ(list.status, 200);
  ExpectShapeOf("run.list.response.json", list);
  Reply demand = w1_->Get("/v1/api/demand");
  ASSERT_EQ(demand.status, 200) << demand.Describe();
  ASSERT_FALSE(demand["groups"].Empty()) << demand.body;
  ExpectShapeOf("demand.response.json", demand);

  // The error examples: a 400 on max, a fenced 409, an already_applied 409.
  Reply bad = w1_->Post("/v1/api/steps/claim", R"({"worker_id":"scimesh-dev/42/n1","max":65})");
  ASSERT_EQ(bad.status, 400);
  ExpectShapeOf("error.400.json", bad);
  Reply fenced = w1_->Heartbeat(solve, kWorker, 2);
  ASSERT_EQ(fenced.status, 409);
  ExpectShapeOf("error.409.json", fenced);
  Reply applied = w1_->Post("/v1/api/steps/" + solve + "/complete", Example("complete.request.json"));
  ASSERT_EQ(applied.status, 409);
  ExpectShapeOf("error.409.already_applied.json", applied);

  // fail, on a second run's first attempt, exactly as in the example.
  std::string run2 = StartRunOrEmpty("mesh-study", R"({"coarse":8})");
  auto leases2 = Leases(w1_->Post("/v1/api/steps/claim", WithRun(Example("claim.request.json"), run2)));
  ASSERT_EQ(leases2.size(), 1u);
  Reply failed = w1_->Post("/v1/api/steps/" + leases2[0].lease_id + "/fail", Example("fail.request.json"));
  ASSERT_EQ(failed.status, 200) << failed.Describe();
  ExpectShapeOf("fail.response.json", failed);

  Reply cancel = exec_->CancelRun(run);
  ASSERT_EQ(cancel.status, 200);
  ExpectShapeOf("run.cancel.response.json", cancel);
}

TEST(ContractFiles, EveryResponseExampleIsCoveredByTheTestAbove) {
  // A new example file must come with its check here.
  const std::set<std::string> covered = {
      "artifact.response.json", "claim.response.json", "complete.response.json", "error.400.json",
      "error.409.already_applied.json", "error.409.json", "fail.response.json", "heartbeat.response.json",
      "register.response.json", "run.cancel.response.json", "run.create.response.json", "run.journal.response.json",
      "run.list.response.json", "run.show.response.json", "started.response.json", "claim.request.json",
      "complete.request.json", "fail.request.json", "heartbeat.request.json", "register.request.json",
      "run.create.request.json", "started.request.json", "demand.response.json"};
  DIR* d = ::opendir(SCIMESH_PROTOCOL_EXAMPLES);
  ASSERT_NE(d, nullptr);
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") {
      EXPECT_TRUE(covered.count(name)) << name;
    }
  }
  ::closedir(d);
}

}  // namespace
}  // namespace scimesh::coordinator::testing
