// Captures every log line of a full worker session, including errors that
// echo the token back, and checks the token never appears in any of them.
#include <sstream>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "protocol/util/log.h"
#include "protocol/util/sha256.h"
#include "tests/client/worker_harness.h"

namespace scimesh {
namespace {

using testing::CallOf;
using testing::RecordedRequest;
using testing::Reply;

TEST(LogRedaction, TheTokenNeverAppearsInTheLogsOfAFullWorkerSession) {
  const std::string token = "tok-must-never-leak-93c1d7";
  std::ostringstream captured;
  log::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(captured));
  log::SetLevel(spdlog::level::trace);
  {
    testing::WorkerHarness h(token);
    std::atomic<int> registers{0}, heartbeats{0};
    // A hostile coordinator that echoes the credentials back in its errors.
    h.coordinator().SetIntercept([&](const RecordedRequest& r) -> std::optional<Reply> {
      const std::string echo = "rejected " + r.Header("authorization") + " (raw " + token + ")";
      if (r.path.find("/register") != std::string::npos && registers++ == 0) {
        return Reply::Json(503, R"({"error":"unavailable","message":")" + echo + R"("})");
      }
      if (CallOf(r) == "heartbeat" && heartbeats++ == 0) {
        return Reply::Json(500, R"({"error":"internal","message":")" + echo + R"("})");
      }
      return std::nullopt;
    });
    h.Hold({{"ok", [&](StepContext& ctx) {
               // Keep the lease long enough for heartbeats, one of them failing.
               ctx.cancellation().WaitFor(Millis(400));
               return StepResult::Output(R"({"done":true})");
             }},
            {"bad", [&](StepContext&) { return StepResult::Fatal("auth " + token + " failed"); }}});
    Lease good = h.coordinator().MakeLease("ok");
    const std::string input = "input";
    good.input_artifacts.push_back(
        InputArtifact{"prev", "in.txt", h.coordinator().AddBlob(input), Sha256Hex(input), 5, "text/plain"});
    h.coordinator().Offer(good);
    h.coordinator().Offer(h.coordinator().MakeLease("bad"));
    h.coordinator().Offer(h.coordinator().MakeLease("not-held"));
    h.Start();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(h.NextReport().has_value());
    EXPECT_TRUE(h.StopAndJoin().ok());
    EXPECT_GE(heartbeats.load(), 2);
    // The fail message sent to the coordinator is redacted too.
    bool saw_fail = false;
    for (const auto& r : h.coordinator().server().requests()) {
      if (CallOf(r) == "fail") {
        saw_fail = true;
        EXPECT_EQ(r.body.find(token), std::string::npos) << r.body;
      }
    }
    EXPECT_TRUE(saw_fail);
  }
  log::SetSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  log::SetLevel(spdlog::level::info);

  const std::string logs = captured.str();
  EXPECT_EQ(logs.find(token), std::string::npos) << logs;
  // The echoes were logged (so this test could have failed), redacted.
  EXPECT_NE(logs.find("[redacted]"), std::string::npos) << logs;
  EXPECT_NE(logs.find("register"), std::string::npos);
  EXPECT_NE(logs.find("heartbeat"), std::string::npos);
  EXPECT_GT(std::count(logs.begin(), logs.end(), '\n'), 10);
}

}  // namespace
}  // namespace scimesh
