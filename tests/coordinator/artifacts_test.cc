// Integration: artifacts — streamed upload with SHA-256 check, idempotent
// replay, coordinator-issued URIs only in `complete`, download, and the
// artifacts handed to the next step.
#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

class Artifacts : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.extra_args = {"--max-artifact", "4096"};
    return o;
  }
  void SetUp() override {
    CoordinatorTest::SetUp();
    RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"make"},{"id":"use","needs":["make"]}])"));
    run_ = StartRunOrEmpty("wf");
    lease_ = ClaimOne(*w1_, "worker-1");
    ASSERT_EQ(w1_->Started(lease_.lease_id, "worker-1", 1).status, 200);
  }
  Reply Upload(ApiClient& c, const LeaseRef& l, const std::string& name, const std::string& bytes,
               const std::string& sha, const std::string& worker = "worker-1", int64_t attempt = 1) {
    return c.Put("/v1/api/steps/" + l.lease_id + "/artifacts/" + name + "?worker_id=" + worker +
                     "&attempt=" + std::to_string(attempt),
                 bytes, sha, "text/plain");
  }
  static std::string ArtifactsMember(const Reply& upload) {
    return R"(,"artifacts":[)" + upload.body + "]";
  }

  std::string run_;
  LeaseRef lease_;
};

TEST_F(Artifacts, UploadCompleteDownloadAndHandOn) {
  const std::string bytes = "convergence table\n";
  Reply up = Upload(*w1_, lease_, "table.txt", bytes, Sha256(bytes));
  ASSERT_EQ(up.status, 201) << up.Describe();
  EXPECT_EQ(up.Str("name"), "table.txt");
  EXPECT_EQ(up.Str("sha256"), Sha256(bytes));
  EXPECT_EQ(up["size"].GetInt64(), static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(up.Str("media_type"), "text/plain");
  EXPECT_EQ(up.Str("uri"), process_->url() + "/v1/api/artifacts/" + Sha256(bytes));

  // Replay of the same upload: 200 with the same body.
  Reply again = Upload(*w1_, lease_, "table.txt", bytes, Sha256(bytes));
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body, up.body);

  ASSERT_EQ(w1_->Complete(lease_.lease_id, "worker-1", 1, "{}", ArtifactsMember(up)).status, 200);
  Reply show = exec_->ShowRun(run_);
  const rapidjson::Value& listed = (*FindStep(show, "make"))["artifacts"];
  ASSERT_EQ(listed.Size(), 1u);
  EXPECT_STREQ(listed[0]["uri"].GetString(), up.Str("uri").c_str());

  LeaseRef use = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(use.step_id, "use");
  const rapidjson::Value& inputs = use.value()["input_artifacts"];
  ASSERT_EQ(inputs.Size(), 1u);
  EXPECT_STREQ(inputs[0]["step_id"].GetString(), "make");
  EXPECT_STREQ(inputs[0]["sha256"].GetString(), Sha256(bytes).c_str());

  // Download with a worker key and with an execute key.
  const std::string path = "/v1/api/artifacts/" + Sha256(bytes);
  for (ApiClient* c : {w1_.get(), exec_.get()}) {
    Reply got = c->Get(path);
    ASSERT_EQ(got.status, 200);
    EXPECT_EQ(got.body, bytes);
    EXPECT_EQ(got.sha256_header, Sha256(bytes));
  }
  ApiClient anonymous(process_->port(), "");
  EXPECT_EQ(anonymous.Get(path).status, 401);
  EXPECT_EQ(exec_->Get("/v1/api/artifacts/" + std::string(64, '0')).status, 404);
}

TEST_F(Artifacts, ChecksumMismatchIsRefusedAndNothingIsKept) {
  Reply up = Upload(*w1_, lease_, "table.txt", "actual bytes", Sha256("other bytes"));
  EXPECT_EQ(up.status, 400) << up.Describe();
  EXPECT_EQ(up.Str("error"), "checksum_mismatch");
  EXPECT_EQ(exec_->Get("/v1/api/artifacts/" + Sha256("actual bytes")).status, 404);
  // The name is still free for the right bytes.
  EXPECT_EQ(Upload(*w1_, lease_, "table.txt", "other bytes", Sha256("other bytes")).status, 201);
}

TEST_F(Artifacts, SameNameWithOtherBytesIsA400OnName) {
  ASSERT_EQ(Upload(*w1_, lease_, "a.txt", "one", Sha256("one")).status, 201);
  Reply r = Upload(*w1_, lease_, "a.txt", "two", Sha256("two"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Str("field"), "name");
}

TEST_F(Artifacts, CompleteRefusesReferencesTheCoordinatorDidNotIssue) {
  Reply up = Upload(*w1_, lease_, "a.txt", "one", Sha256("one"));
  ASSERT_EQ(up.status, 201);
  auto ref = [&](const std::string& uri, const std::string& sha, const std::string& name = "a.txt") {
    return R"(,"artifacts":[{"name":)" + Quote(name) + R"(,"uri":)" + Quote(uri) + R"(,"sha256":)" + Quote(sha) +
           R"(,"size":3,"media_type":"text/plain"}])";
  };
  for (const std::string& members :
       {ref("file:///spool/a.txt", Sha256("one")), ref("worker://n1/a.txt", Sha256("one")),
        ref(up.Str("uri"), Sha256("two")), ref(up.Str("uri"), Sha256("one"), "never-uploaded.txt")}) {
    Reply r = w1_->Complete(lease_.lease_id, "worker-1", 1, "{}", members);
    EXPECT_EQ(r.status, 400) << members;
    EXPECT_EQ(r.Str("field"), "artifacts[0]");
  }
  EXPECT_EQ(AttemptStatus(run_, "make", 1), "running");  // nothing recorded
  EXPECT_EQ(w1_->Complete(lease_.lease_id, "worker-1", 1, "{}", ArtifactsMember(up)).status, 200);
}

TEST_F(Artifacts, AnotherLeasesArtifactIsNotIssuedForThisOne) {
  // A second run's lease uploads; its reference is refused on the first lease.
  std::string other_run = StartRunOrEmpty("wf");
  LeaseRef other = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(other.run_id, other_run);
  Reply up = Upload(*w1_, other, "a.txt", "one", Sha256("one"));
  ASSERT_EQ(up.status, 201);
  Reply r = w1_->Complete(lease_.lease_id, "worker-1", 1, "{}", ArtifactsMember(up));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Str("field"), "artifacts[0]");
}

TEST_F(Artifacts, OversizedArtifactIs413AndNothingIsKept) {
  const std::string big(5000, 'b');
  Reply r = Upload(*w1_, lease_, "big.bin", big, Sha256(big));
  EXPECT_EQ(r.status, 413) << r.Describe();
  EXPECT_EQ(r.Str("error"), "too_large");
  EXPECT_EQ(exec_->Get("/v1/api/artifacts/" + Sha256(big)).status, 404);
  ApiClient fresh(process_->port(), process_->token("w1"));
  EXPECT_EQ(Upload(fresh, lease_, "small.bin", "ok", Sha256("ok")).status, 201);
}

TEST_F(Artifacts, UploadIsCheckedLikeAHeartbeat) {
  Reply wrong_worker = Upload(*w1_, lease_, "a.txt", "one", Sha256("one"), "worker-2");
  EXPECT_EQ(wrong_worker.status, 409);
  EXPECT_EQ(wrong_worker.Str("reason"), "fenced");
  EXPECT_EQ(Upload(*w2_, lease_, "a.txt", "one", Sha256("one")).status, 403);
  Reply bad_name = Upload(*w1_, lease_, ".hidden", "one", Sha256("one"));
  EXPECT_EQ(bad_name.status, 400);
  EXPECT_EQ(bad_name.Str("field"), "name");
  Reply bad_sha = Upload(*w1_, lease_, "a.txt", "one", "ABC");
  EXPECT_EQ(bad_sha.Str("field"), "X-Scimesh-Sha256");
  ASSERT_EQ(w1_->Complete(lease_.lease_id, "worker-1", 1).status, 200);
  Reply after = Upload(*w1_, lease_, "late.txt", "one", Sha256("one"));
  EXPECT_EQ(after.status, 409);
  EXPECT_EQ(after.Str("reason"), "already_applied");
}

}  // namespace
}  // namespace scimesh::coordinator::testing
