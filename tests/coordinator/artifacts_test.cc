// Integration: artifacts — streamed upload with SHA-256 check, idempotent
// replay, coordinator-issued URIs only in `complete`, download, and the
// artifacts handed to the next step.
#include <filesystem>
#include <thread>

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

// The attack: 1,500 uploads on one lease were all accepted. A lease may
// upload its quota, told in the lease; past it 413 and nothing is kept.
class Quota : public Artifacts {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.extra_args = {"--max-artifacts-per-lease", "2", "--max-artifact-bytes-per-lease", "10"};
    return o;
  }
};

TEST_F(Quota, TheLeaseTellsItsQuota) {
  // `use` needs `make`: read the quota from the lease of a second run's `make`.
  StartRunOrEmpty("wf");
  Reply second = w1_->Claim("worker-1", 1, 2000);
  ASSERT_EQ(second.status, 200) << second.Describe();
  ASSERT_TRUE(second["leases"].IsArray() && second["leases"].Size() == 1) << second.body;
  EXPECT_EQ(second["leases"][0]["artifact_quota"]["count"].GetInt64(), 2);
  EXPECT_EQ(second["leases"][0]["artifact_quota"]["bytes"].GetInt64(), 10);
}

TEST_F(Quota, PastTheCountOrTheBytesAnUploadIs413AndNothingIsKept) {
  ASSERT_EQ(Upload(*w1_, lease_, "a.txt", "1234", Sha256("1234")).status, 201);
  ASSERT_EQ(Upload(*w1_, lease_, "b.txt", "5678", Sha256("5678")).status, 201);
  EXPECT_EQ(Upload(*w1_, lease_, "a.txt", "1234", Sha256("1234")).status, 200) << "a replay counts once";
  Reply third = Upload(*w1_, lease_, "c.txt", "9", Sha256("9"));
  EXPECT_EQ(third.status, 413) << third.Describe();
  EXPECT_EQ(third.Str("error"), "too_large");
  EXPECT_NE(third.Str("message").find("artifact quota (2 files, 10 bytes in all)"), std::string::npos) << third.body;
  EXPECT_EQ(exec_->Get("/v1/api/artifacts/" + Sha256("9")).status, 404);
}

TEST_F(Quota, PastTheBytesAnUploadIs413) {
  ASSERT_EQ(Upload(*w1_, lease_, "a.txt", "123456", Sha256("123456")).status, 201);
  Reply over = Upload(*w1_, lease_, "b.txt", "789012", Sha256("789012"));
  EXPECT_EQ(over.status, 413) << over.Describe();
  EXPECT_NE(over.Str("message").find("12 bytes of artifacts would exceed"), std::string::npos) << over.body;
}

// The attack: a full store answered 500 and the step spent an attempt on it.
class FullStore : public Artifacts {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.extra_args = {"--max-store-bytes", "10"};
    return o;
  }
};

TEST_F(FullStore, AnUploadPastTheStoreIs507WithRetryAfterAndNothingIsKept) {
  ASSERT_EQ(Upload(*w1_, lease_, "a.txt", "12345678", Sha256("12345678")).status, 201);
  Reply full = Upload(*w1_, lease_, "b.txt", "abcdefgh", Sha256("abcdefgh"));
  EXPECT_EQ(full.status, 507) << full.Describe();
  EXPECT_EQ(full.Str("error"), "insufficient_storage");
  EXPECT_FALSE(full.retry_after.empty());
  EXPECT_EQ(exec_->Get("/v1/api/artifacts/" + Sha256("abcdefgh")).status, 404);
  // The step's attempt is not spent: requeued, attempt 1 still the only spent one.
  Reply failed = w1_->Fail(lease_.lease_id, "worker-1", 1, "storage_full", "the artifact store is full");
  ASSERT_EQ(failed.status, 200) << failed.Describe();
  EXPECT_TRUE(failed["requeued"].GetBool());
}

// The attack: nothing was ever deleted. Uploads of an attempt that did not
// complete go after the grace; a completed step's stay.
class Collection : public Artifacts {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.extra_args = {"--artifact-grace-ms", "300"};
    return o;
  }
  bool Stored(const std::string& bytes) const {
    const std::string sha = Sha256(bytes);
    return std::filesystem::exists(process_->db() + ".artifacts/" + sha.substr(0, 2) + "/" + sha);
  }
};

TEST_F(Collection, UploadsOfAFailedAttemptAreDeletedAfterTheGraceAndACompletedStepsStay) {
  ASSERT_EQ(Upload(*w1_, lease_, "kept.txt", "kept", Sha256("kept")).status, 201);
  Reply ok = Upload(*w1_, lease_, "kept.txt", "kept", Sha256("kept"));
  ASSERT_EQ(w1_->Complete(lease_.lease_id, "worker-1", 1, "{}", ArtifactsMember(ok)).status, 200);
  LeaseRef use = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(use.lease_id, "worker-1", 1).status, 200);
  ASSERT_EQ(Upload(*w1_, use, "dropped.txt", "dropped", Sha256("dropped")).status, 201);
  ASSERT_EQ(w1_->Fail(use.lease_id, "worker-1", 1, "fatal", "broken").status, 200);
  ASSERT_TRUE(Stored("dropped"));
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = !Stored("dropped");
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "an upload of a failed attempt outlived its grace by 10 s";
  EXPECT_EQ(exec_->Get("/v1/api/artifacts/" + Sha256("dropped")).status, 404);
  EXPECT_TRUE(Stored("kept"));
  EXPECT_EQ(exec_->Get("/v1/api/artifacts/" + Sha256("kept")).status, 200);
}

}  // namespace
}  // namespace scimesh::coordinator::testing
