// Integration: GET /v1/api/runs and `scimesh-coordinator run list` — the
// runs a key may read, newest first and bounded; 403 for a key without the
// scope, 400 naming a bad parameter; each read in the audit log.
#include <fstream>
#include <sstream>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

class RunList : public CoordinatorTest {
 protected:
  std::vector<std::string> Ids(const Reply& r) {
    std::vector<std::string> ids;
    if (!r["runs"].IsArray()) return ids;
    for (const auto& run : r["runs"].GetArray()) ids.push_back(run["run_id"].GetString());
    return ids;
  }
  int Cli(const std::vector<std::string>& args, const std::string& key, std::string* out) {
    return process_->RunCli(args, {{"SCIMESH_URL", process_->url()}, {"SCIMESH_TOKEN_FILE", process_->token_file(key)}},
                            out);
  }
};

TEST_F(RunList, EachKeyListsWhatItMayReadNewestFirst) {
  RegisterOrDie(*w2_, "worker-2", Definitions("wf", OneStep()));
  RegisterOrDie(*w2_, "worker-2", Definitions("other", OneStep()));
  const std::string first = StartRunOrEmpty("wf");
  const std::string second = StartRunOrEmpty("other");
  Reply theirs = Client("exec2")->StartRun("wf");
  ASSERT_EQ(theirs.status, 201);

  EXPECT_EQ(Ids(exec_->Get("/v1/api/runs")), (std::vector<std::string>{second, first}));
  EXPECT_EQ(Ids(Client("exec2")->Get("/v1/api/runs")), std::vector<std::string>{theirs.Str("run_id")});
  EXPECT_EQ(Ids(Client("reader")->Get("/v1/api/runs")).size(), 3u);
  EXPECT_EQ(Ids(root_->Get("/v1/api/runs?workflow=wf")).size(), 2u);
  EXPECT_EQ(Ids(exec_->Get("/v1/api/runs?workflow=wf")), std::vector<std::string>{first});
  Reply one = exec_->Get("/v1/api/runs?limit=1");
  EXPECT_EQ(Ids(one), std::vector<std::string>{second});
  EXPECT_TRUE(one["more"].IsTrue());
  ASSERT_EQ(exec_->CancelRun(first).status, 200);
  EXPECT_EQ(Ids(exec_->Get("/v1/api/runs?state=cancelled")), std::vector<std::string>{first});
  EXPECT_EQ(Ids(exec_->Get("/v1/api/runs?state=running")), std::vector<std::string>{second});
}

TEST_F(RunList, AKeyWithoutTheScopeIsRefusedAndABadParameterIsNamed) {
  EXPECT_EQ(w1_->Get("/v1/api/runs").status, 403);
  EXPECT_EQ(ApiClient(process_->port(), "nonsense").Get("/v1/api/runs").status, 401);
  for (const char* query : {"limit=0", "limit=201", "limit=ten", "state=done", "workflow=..",
                            "workflow=a&workflow=b"}) {
    Reply r = exec_->Get(std::string("/v1/api/runs?") + query);
    EXPECT_EQ(r.status, 400) << query;
    const std::string param = std::string(query).substr(0, std::string(query).find('='));
    EXPECT_EQ(r.Str("field"), param) << query << ": " << r.Describe();
  }
  EXPECT_EQ(exec_->Get("/v1/api/runs?limit=200&unknown=1").status, 200);
}

TEST_F(RunList, ListingIsAudited) {
  ASSERT_EQ(exec_->Get("/v1/api/runs?state=failed").status, 200);
  ASSERT_EQ(w1_->Get("/v1/api/runs").status, 403);
  std::ifstream in(process_->db() + ".audit.log");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string audit = ss.str();
  EXPECT_NE(audit.find(R"("key":"exec","method":"GET","path":"/v1/api/runs","status":200)"), std::string::npos)
      << audit;
}

TEST_F(RunList, TheCommandPrintsOneLineARunAndChecksItsFlags) {
  RegisterOrDie(*w2_, "worker-2", Definitions("wf", OneStep()));
  const std::string first = StartRunOrEmpty("wf", "{}", R"(,"correlation":{"ticket":7})");
  const std::string second = StartRunOrEmpty("wf");
  std::string out;
  ASSERT_EQ(Cli({"run", "list"}, "exec", &out), 0) << out;
  EXPECT_EQ(out.find(second + "  wf@1  running  created "), 0u) << out;
  EXPECT_NE(out.find("\n" + first + "  wf@1  running  created "), std::string::npos) << out;
  EXPECT_NE(out.find(R"(correlation {"ticket":7})"), std::string::npos) << out;
  ASSERT_EQ(Cli({"run", "list", "--limit", "1", "--json"}, "exec", &out), 0) << out;
  rapidjson::Document doc;
  ASSERT_FALSE(doc.Parse(out.c_str()).HasParseError()) << out;
  ASSERT_EQ(doc["runs"].Size(), 1u);
  EXPECT_EQ(std::string(doc["runs"][0]["run_id"].GetString()), second);
  EXPECT_TRUE(doc["more"].IsTrue());
  ASSERT_EQ(Cli({"run", "list", "--state", "completed"}, "exec", &out), 0);
  EXPECT_EQ(out, "");
  ASSERT_EQ(Cli({"run", "list"}, "reader", &out), 0);
  EXPECT_NE(out.find(first), std::string::npos) << "a read key lists every run: " << out;
  for (std::vector<std::string> bad : {std::vector<std::string>{"--limit", "0"}, {"--limit", "201"}, {"--limit", "x"},
                                       {"--state", "done"}, {"--workflow", ".."}, {"r_0123456789abcdef"}}) {
    bad.insert(bad.begin(), {"run", "list"});
    EXPECT_EQ(Cli(bad, "exec", &out), 2) << bad[2];
  }
  EXPECT_EQ(Cli({"run", "list"}, "w1", &out), 1) << "a worker key may not list runs";
}

}  // namespace
}  // namespace scimesh::coordinator::testing
