// The worker rules, each its own scenario, against the fake coordinator:
// runner error, bad input checksum, upload error, lease lost mid-body, empty
// result, unservable, replayed complete, run_terminal, concurrency.
#include "protocol/runtime/worker.h"

#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "protocol/attempt/lease_state.h"
#include "protocol/util/log.h"
#include "protocol/util/sha256.h"
#include "protocol/wire/wire_json.h"
#include "tests/client/worker_harness.h"

namespace scimesh {
namespace {

using testing::Call;
using testing::CallOf;
using testing::LeaseIdOf;
using testing::RecordedRequest;
using testing::Reply;
using testing::WorkerHarness;

const char* const kToken = "tok-worker-test-77aa";

StepBody Returning(const StepResult& r) {
  return [r](StepContext&) { return r; };
}

// Index of the first request about `lease_id` with call `call`; -1 if none.
int IndexOf(const std::vector<RecordedRequest>& reqs, const std::string& lease_id, const std::string& call) {
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (LeaseIdOf(reqs[i]) == lease_id && CallOf(reqs[i]) == call) return static_cast<int>(i);
  }
  return -1;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(WorkerRules, HappyPathVerifiesInputsStartsBeforeTheBodyUploadsBeforeComplete) {
  WorkerHarness h(kToken);
  const std::string input_bytes = "solution of solve-16\n";
  std::string seen_input;
  std::atomic<bool> beat_seen{false};
  Lease lease = h.coordinator().MakeLease("report");
  lease.input_artifacts.push_back(InputArtifact{"solve-16", "solution.vti", h.coordinator().AddBlob(input_bytes),
                                                Sha256Hex(input_bytes), static_cast<int64_t>(input_bytes.size()),
                                                "text/plain"});
  const std::string id = lease.lease_id;
  h.Hold({{"report", [&](StepContext& ctx) {
             seen_input = ReadText(*ctx.InputArtifactPath("solve-16", "solution.vti"));
             // Keep running until the lease has been kept alive at least once.
             beat_seen = h.coordinator().server().WaitFor(
                 [&](const RecordedRequest& r) { return LeaseIdOf(r) == id && CallOf(r) == "heartbeat"; },
                 Millis(5000));
             EXPECT_TRUE(ctx.SetStatePatch(R"({"resolution":"done"})").ok());
             ctx.SetUsage("cpu_s", 1.5);
             EXPECT_TRUE(ctx.WriteArtifact("convergence.txt", "0.0031\n", "text/plain").ok());
             return StepResult::Output(R"({"observed_order": 2.01, "n": )" +
                                       std::to_string(ctx.input()["n"].GetInt()) + "}");
           }}});
  h.coordinator().Offer(lease);
  h.Start();
  auto report = h.NextReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->end, LeaseEnd::kCompleted) << report->detail;
  EXPECT_TRUE(report->body_ran);
  EXPECT_EQ(seen_input, input_bytes);
  EXPECT_TRUE(beat_seen.load());

  auto complete = h.coordinator().CompleteOf(id);
  ASSERT_TRUE(complete.has_value());
  EXPECT_EQ(complete->output_json, R"({"observed_order":2.01,"n":3})");
  EXPECT_EQ(complete->state_patch_json, R"({"resolution":"done"})");
  ASSERT_TRUE(complete->usage_json.has_value());
  EXPECT_NE(complete->usage_json->find("\"cpu_s\":1.5"), std::string::npos);
  EXPECT_NE(complete->usage_json->find("\"wall_s\""), std::string::npos);
  ASSERT_EQ(complete->artifacts.size(), 1u);
  EXPECT_EQ(complete->artifacts[0].sha256, Sha256Hex("0.0031\n"));
  EXPECT_EQ(complete->artifacts[0].uri, h.coordinator().url() + "/v1/api/artifacts/" + Sha256Hex("0.0031\n"));
  EXPECT_EQ(complete->worker_id, "test-host/1");
  EXPECT_EQ(complete->attempt, 1);

  auto reqs = h.coordinator().server().requests();
  int download = -1;
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].method == "GET" && reqs[i].path.find("/artifacts/") != std::string::npos) download = static_cast<int>(i);
  }
  const int started = IndexOf(reqs, id, "started");
  const int upload = IndexOf(reqs, id, "artifacts");
  const int done = IndexOf(reqs, id, "complete");
  ASSERT_GE(download, 0);
  EXPECT_LT(download, started);  // inputs verified before the body may start
  EXPECT_LT(started, upload);
  EXPECT_LT(upload, done);       // complete only after the upload was confirmed
  EXPECT_EQ(h.coordinator().CallsFor(id, "fail"), 0u);

  const std::string dir = h.spool() + "/" + lease.run_id + "/report/1";
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/lease.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto state = ReadLeaseState(dir + "/lease.state");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->state, LeaseHold::kDone);
  EXPECT_EQ(state->lease_id, id);
  EXPECT_GE(state->seq, 3);
  EXPECT_TRUE(h.StopAndJoin().ok());
}

TEST(WorkerRules, RegistersItsDefinitionsAndClaimsWithItsFreeSlots) {
  WorkerHarness h(kToken);
  h.options().concurrency = 3;
  h.Hold({{"a", Returning(StepResult::Output("{}"))}, {"b", Returning(StepResult::Output("{}"))}});
  h.Start();
  ASSERT_TRUE(h.coordinator().server().WaitFor(Call("POST", "/claim"), Millis(5000)));
  EXPECT_TRUE(h.StopAndJoin().ok());
  auto reqs = h.coordinator().server().requests();
  ASSERT_GE(reqs.size(), 2u);
  auto reg = ParseRegisterRequest(reqs[0].body);
  ASSERT_TRUE(reg.ok()) << reqs[0].path;
  EXPECT_EQ(reg->worker_id, "test-host/1");
  EXPECT_EQ(reg->concurrency, 3);
  ASSERT_EQ(reg->definitions.size(), 1u);
  EXPECT_EQ(reg->definitions[0].steps.size(), 2u);
  auto claim = ParseClaimRequest(reqs[1].body);
  ASSERT_TRUE(claim.ok());
  EXPECT_EQ(claim->max, 3);
  EXPECT_EQ(claim->wait_ms, 200);
}

TEST(WorkerRules, RunnerErrorIsReportedWithFailNeverComplete) {
  struct Case {
    StepBody body;
    FailClass cls;
    std::string message;
  };
  std::vector<Case> cases = {
      {Returning(StepResult::Retryable("solver exited with status 3")), FailClass::kRetryable, "solver exited with status 3"},
      {Returning(StepResult::Failure(FailClass::kTimeout, "ran past walltime")), FailClass::kTimeout, "ran past walltime"},
      {[](StepContext&) -> StepResult { throw std::runtime_error("matrix is singular"); }, FailClass::kFatal,
       "matrix is singular"},
      {[](StepContext&) -> StepResult { throw 42; }, FailClass::kFatal, "the step body threw a non-standard exception"},
  };
  for (const auto& c : cases) {
    WorkerHarness h(kToken);
    h.Hold({{"solve", c.body}});
    Lease lease = h.coordinator().MakeLease("solve");
    h.coordinator().Offer(lease);
    h.Start();
    auto report = h.NextReport();
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->end, LeaseEnd::kFailed) << report->detail;
    EXPECT_TRUE(report->body_ran);
    auto fail = h.coordinator().FailOf(lease.lease_id);
    ASSERT_TRUE(fail.has_value());
    EXPECT_EQ(fail->error_class, c.cls);
    EXPECT_EQ(fail->message, c.message);
    EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "complete"), 0u);
  }
}

TEST(WorkerRules, FailMessagesCarryNoStackTraceAndNoLocalPath) {
  std::ostringstream logs;
  log::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(logs));
  WorkerHarness h(kToken);
  h.Hold({{"solve", Returning(StepResult::Fatal("cannot open /home/alice/runs/r1/mesh.vti: no such file\n"
                                                "  #0 0x7f3a in solve() at /src/solver.cc:88\n  #1 main"))}});
  Lease lease = h.coordinator().MakeLease("solve");
  h.coordinator().Offer(lease);
  h.Start();
  ASSERT_TRUE(h.NextReport().has_value());
  auto fail = h.coordinator().FailOf(lease.lease_id);
  ASSERT_TRUE(fail.has_value());
  EXPECT_EQ(fail->message, "cannot open mesh.vti: no such file");
  EXPECT_TRUE(h.StopAndJoin().ok());
  log::SetSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  // The worker's own log says what was sent, not the raw message.
  EXPECT_NE(logs.str().find("fail fatal: cannot open mesh.vti: no such file"), std::string::npos) << logs.str();
  EXPECT_EQ(logs.str().find("/home/alice"), std::string::npos) << logs.str();
  EXPECT_EQ(logs.str().find("solver.cc"), std::string::npos) << logs.str();
}

TEST(WorkerRules, BadInputChecksumFailsAndTheBodyNeverRuns) {
  for (Delivery delivery : {Delivery::kAtLeastOnce, Delivery::kAtMostOnce}) {
    WorkerHarness h(kToken);
    std::atomic<int> ran{0};
    h.Hold({{"report", [&](StepContext&) {
               ++ran;
               return StepResult::Output("{}");
             }}});
    Lease lease = h.coordinator().MakeLease("report", delivery);
    const std::string served = "tampered bytes";
    const std::string promised = "expected bytes";  // same size, other content
    lease.input_artifacts.push_back(InputArtifact{"solve-16", "solution.vti", h.coordinator().AddBlob(served),
                                                  Sha256Hex(promised), static_cast<int64_t>(promised.size()), "x/y"});
    h.coordinator().Offer(lease);
    h.Start();
    auto report = h.NextReport();
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->end, LeaseEnd::kFailed) << report->detail;
    EXPECT_EQ(report->fail_class, FailClass::kInputChecksum);
    EXPECT_FALSE(report->body_ran);
    EXPECT_EQ(ran.load(), 0);
    auto fail = h.coordinator().FailOf(lease.lease_id);
    ASSERT_TRUE(fail.has_value()) << "an at_most_once attempt must be started before it can fail";
    EXPECT_EQ(fail->error_class, FailClass::kInputChecksum);
    EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "complete"), 0u);
    // at_least_once fails straight from leased; at_most_once must say started first.
    EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "started"), delivery == Delivery::kAtMostOnce ? 1u : 0u);
    // The unverified bytes never became the input file.
    EXPECT_FALSE(std::filesystem::exists(h.spool() + "/" + lease.run_id + "/report/1/inputs/solve-16/solution.vti"));
  }
}

TEST(WorkerRules, UploadErrorFailsAndNeverCompletes) {
  // 500 retried then retryable; 400 (the step's name or bytes) invalid_output;
  // 507 (a full store) retried with its Retry-After, then storage_full, which
  // spends no attempt.
  for (int status : {500, 400, 507}) {
    WorkerHarness h(kToken, /*lease_ttl_ms=*/800, /*heartbeat_ms=*/100);
    h.coordinator().SetIntercept([status](const RecordedRequest& r) -> std::optional<Reply> {
      if (CallOf(r) == "artifacts") return Reply::Json(status, R"({"error":"x","message":"storage full"})");
      return std::nullopt;
    });
    h.Hold({{"solve", [](StepContext& ctx) {
               EXPECT_TRUE(ctx.WriteArtifact("field.vti", "bytes", "application/octet-stream").ok());
               return StepResult::Output(R"({"ok":true})");
             }}});
    Lease lease = h.coordinator().MakeLease("solve");
    h.coordinator().Offer(lease);
    h.Start();
    auto report = h.NextReport();
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->end, LeaseEnd::kFailed) << report->detail;
    auto fail = h.coordinator().FailOf(lease.lease_id);
    ASSERT_TRUE(fail.has_value());
    EXPECT_EQ(fail->error_class, status == 500   ? FailClass::kRetryable
                                 : status == 400 ? FailClass::kInvalidOutput
                                                 : FailClass::kStorageFull)
        << status;
    EXPECT_NE(fail->message.find("upload of field.vti failed"), std::string::npos) << fail->message;
    EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "complete"), 0u);
    EXPECT_GE(h.coordinator().CallsFor(lease.lease_id, "artifacts"), status == 400 ? 1u : 2u);
  }
}

// The attack: 1,100 files in artifacts/ were all uploaded before complete was
// refused, and the lease was left unreported. Past the lease's quota nothing
// is uploaded and the step fails at once.
TEST(WorkerRules, ArtifactsPastTheLeasesQuotaFailTheStepBeforeAnyUpload) {
  for (const ArtifactQuota quota : {ArtifactQuota{2, 0}, ArtifactQuota{1024, 10}}) {
    WorkerHarness h(kToken, /*lease_ttl_ms=*/800, /*heartbeat_ms=*/100);
    h.Hold({{"solve", [](StepContext& ctx) {
               for (const char* name : {"a.bin", "b.bin", "c.bin"}) {
                 EXPECT_TRUE(ctx.WriteArtifact(name, "12345", "application/octet-stream").ok());
               }
               return StepResult::Output(R"({"ok":true})");
             }}});
    Lease lease = h.coordinator().MakeLease("solve");
    lease.artifact_quota = quota;
    h.coordinator().Offer(lease);
    h.Start();
    auto report = h.NextReport();
    ASSERT_TRUE(report.has_value());
    auto fail = h.coordinator().FailOf(lease.lease_id);
    ASSERT_TRUE(fail.has_value()) << report->detail;
    EXPECT_EQ(fail->error_class, FailClass::kInvalidOutput);
    EXPECT_NE(fail->message.find(quota.bytes == 0 ? "the step left 3 artifacts; this lease may upload at most 2"
                                                  : "the step's artifacts hold 15 bytes; this lease may upload at "
                                                    "most 10"),
              std::string::npos)
        << fail->message;
    EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "artifacts"), 0u);
  }
}

TEST(WorkerRules, LeaseFencedMidBodyCancelsTheBodyAndNothingMoreIsWritten) {
  WorkerHarness h(kToken);
  std::atomic<bool> body_saw_cancel{false};
  h.coordinator().SetIntercept([](const RecordedRequest& r) -> std::optional<Reply> {
    if (CallOf(r) == "heartbeat") {
      return Reply::Json(409, R"({"error":"conflict","reason":"fenced","message":"superseded by attempt 2"})");
    }
    return std::nullopt;
  });
  h.Hold({{"solve", [&](StepContext& ctx) {
             body_saw_cancel = ctx.cancellation().WaitFor(Millis(10000));
             (void)ctx.WriteArtifact("late.txt", "x", "text/plain");  // must never be uploaded
             return StepResult::Output(R"({"late":true})");
           }}});
  Lease lease = h.coordinator().MakeLease("solve");
  h.coordinator().Offer(lease);
  h.Start();
  auto report = h.NextReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(body_saw_cancel.load());
  EXPECT_EQ(report->end, LeaseEnd::kAbandoned);
  EXPECT_EQ(report->lost, CancelReason::kFenced);
  EXPECT_TRUE(h.StopAndJoin().ok());
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "heartbeat"), 1u);  // no beat after the refusal
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "artifacts"), 0u);
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "complete"), 0u);
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "fail"), 0u);
  auto state = ReadLeaseState(h.spool() + "/" + lease.run_id + "/solve/1/lease.state");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->state, LeaseHold::kLost);
  EXPECT_EQ(state->reason, CancelReason::kFenced);
}

TEST(WorkerRules, LeaseExpiredMidBodyCancelsTheBodyAndNothingMoreIsWritten) {
  WorkerHarness h(kToken, /*lease_ttl_ms=*/600, /*heartbeat_ms=*/100);
  h.coordinator().SetIntercept([](const RecordedRequest& r) -> std::optional<Reply> {
    if (CallOf(r) == "heartbeat") return Reply::Stall(Millis(5000));  // the coordinator went quiet
    return std::nullopt;
  });
  std::atomic<bool> body_saw_cancel{false};
  h.Hold({{"solve", [&](StepContext& ctx) {
             body_saw_cancel = ctx.cancellation().WaitFor(Millis(10000));
             return StepResult::Output("{}");
           }}});
  Lease lease = h.coordinator().MakeLease("solve");
  h.coordinator().Offer(lease);
  h.Start();
  auto report = h.NextReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(body_saw_cancel.load());
  EXPECT_EQ(report->end, LeaseEnd::kAbandoned);
  EXPECT_EQ(report->lost, CancelReason::kExpired);
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "complete"), 0u);
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "fail"), 0u);
}

TEST(WorkerRules, ALeaseLostByTheProcessHoldingItIsNeverReported) {
  // Rank 0 of an MPI step held the lease and found the run over: the body
  // says so and returns a failure, which must not be sent.
  WorkerHarness h(kToken);
  h.Hold({{"solve", [](StepContext& ctx) {
             ctx.PauseHeartbeats();
             ctx.LeaseLostElsewhere(CancelReason::kRunTerminal);
             EXPECT_TRUE(ctx.cancelled());
             return StepResult::Retryable("the lease was lost; the step was stopped");
           }}});
  Lease lease = h.coordinator().MakeLease("solve");
  h.coordinator().Offer(lease);
  h.Start();
  auto report = h.NextReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->end, LeaseEnd::kAbandoned);
  EXPECT_EQ(report->lost, CancelReason::kRunTerminal);
  EXPECT_TRUE(h.StopAndJoin().ok());
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "fail"), 0u);
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "complete"), 0u);
  auto state = ReadLeaseState(h.spool() + "/" + lease.run_id + "/solve/1/lease.state");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->state, LeaseHold::kLost);
}

TEST(WorkerRules, EmptyResultFailsInvalidOutput) {
  for (const StepResult& result : {StepResult(), StepResult::Output(""), StepResult::Output("  \n"),
                                   StepResult::Output("[1,2]"), StepResult::Output("{\"truncated\":")}) {
    WorkerHarness h(kToken);
    h.Hold({{"solve", Returning(result)}});
    Lease lease = h.coordinator().MakeLease("solve");
    h.coordinator().Offer(lease);
    h.Start();
    auto report = h.NextReport();
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->end, LeaseEnd::kFailed);
    auto fail = h.coordinator().FailOf(lease.lease_id);
    ASSERT_TRUE(fail.has_value());
    EXPECT_EQ(fail->error_class, FailClass::kInvalidOutput) << fail->message;
    EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "complete"), 0u);
  }
}

TEST(WorkerRules, AnEmptyObjectIsAValidOutput) {
  WorkerHarness h(kToken);
  h.Hold({{"solve", Returning(StepResult::Output("{}"))}});
  Lease lease = h.coordinator().MakeLease("solve");
  h.coordinator().Offer(lease);
  h.Start();
  auto report = h.NextReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->end, LeaseEnd::kCompleted);
  EXPECT_EQ(h.coordinator().CompleteOf(lease.lease_id)->output_json, "{}");
}

TEST(WorkerRules, ALeaseItDoesNotHoldFailsUnservableWithoutRunningAnything) {
  for (Delivery delivery : {Delivery::kAtLeastOnce, Delivery::kAtMostOnce}) {
    WorkerHarness h(kToken);
    std::atomic<int> ran{0};
    h.Hold({{"solve", [&](StepContext&) {
               ++ran;
               return StepResult::Output("{}");
             }}});
    Lease other_step = h.coordinator().MakeLease("report", delivery);
    Lease other_version = h.coordinator().MakeLease("solve", delivery);
    other_version.version = "2";
    h.coordinator().Offer(other_step);
    h.coordinator().Offer(other_version);
    h.Start();
    for (const Lease* l : {&other_step, &other_version}) {
      auto report = h.NextReport();
      ASSERT_TRUE(report.has_value());
      EXPECT_EQ(report->end, LeaseEnd::kFailed) << report->detail;
      EXPECT_FALSE(report->body_ran);
      auto fail = h.coordinator().FailOf(l->lease_id);
      ASSERT_TRUE(fail.has_value());
      EXPECT_EQ(fail->error_class, FailClass::kUnservable);
      EXPECT_EQ(h.coordinator().CallsFor(l->lease_id, "heartbeat"), 0u);
    }
    EXPECT_EQ(ran.load(), 0);
    EXPECT_FALSE(std::filesystem::exists(h.spool() + "/" + other_step.run_id));  // no attempt dir either
  }
}

TEST(WorkerRules, CompleteWhoseAnswerWasLostEndsAsCompleted) {
  WorkerHarness h(kToken);
  h.coordinator().ApplyThenDrop("complete", 1);  // applied, then the answer is lost
  h.Hold({{"solve", Returning(StepResult::Output(R"({"x":1})"))}});
  Lease lease = h.coordinator().MakeLease("solve");
  h.coordinator().Offer(lease);
  h.Start();
  auto report = h.NextReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->end, LeaseEnd::kCompleted) << report->detail;
  EXPECT_EQ(report->detail, "already_applied");
  EXPECT_EQ(h.coordinator().Outcome(lease.lease_id), "completed");
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "complete"), 2u);
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "fail"), 0u);
}

TEST(WorkerRules, RunTerminalStopsTheBodyAndStopsServingThatRun) {
  WorkerHarness h(kToken);
  Lease lease = h.coordinator().MakeLease("solve");
  h.options().run_id = lease.run_id;
  h.coordinator().SetIntercept([](const RecordedRequest& r) -> std::optional<Reply> {
    if (CallOf(r) == "heartbeat") {
      return Reply::Json(409, R"({"error":"conflict","reason":"run_terminal","message":"run cancelled"})");
    }
    return std::nullopt;
  });
  h.Hold({{"solve", [](StepContext& ctx) {
             ctx.cancellation().WaitFor(Millis(10000));
             return StepResult::Output("{}");
           }}});
  h.coordinator().Offer(lease);
  h.Start();
  auto report = h.NextReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->lost, CancelReason::kRunTerminal);
  auto served = h.JoinWithin(Millis(5000));  // no Stop(): the run is over, so is serving it
  ASSERT_TRUE(served.has_value());
  EXPECT_TRUE(served->ok()) << served->ToString();
  EXPECT_EQ(h.coordinator().CallsFor(lease.lease_id, "complete"), 0u);
  auto claims = h.coordinator().server().requests();
  for (const auto& c : claims) {
    if (c.path.find("/claim") != std::string::npos) {
      EXPECT_NE(c.body.find(lease.run_id), std::string::npos);
    }
  }
}

TEST(WorkerRules, ConcurrencyRunsThatManyLeasesAtOnce) {
  WorkerHarness h(kToken);
  h.options().concurrency = 3;
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  bool all_together = true;
  h.Hold({{"solve", [&](StepContext&) {
             std::unique_lock<std::mutex> lock(mu);
             ++inside;
             cv.notify_all();
             // Every body waits for the other two: only concurrency 3 gets past.
             if (!cv.wait_for(lock, Millis(10000), [&] { return inside >= 3; })) all_together = false;
             return StepResult::Output("{}");
           }}});
  for (int i = 0; i < 3; ++i) h.coordinator().Offer(h.coordinator().MakeLease("solve"));
  h.Start();
  for (int i = 0; i < 3; ++i) {
    auto report = h.NextReport();
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->end, LeaseEnd::kCompleted);
  }
  EXPECT_TRUE(all_together);
}

}  // namespace
}  // namespace scimesh
