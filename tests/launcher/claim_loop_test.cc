// scimesh-launch's claim loop against a coordinator that misbehaves: one that
// answers every claim at once with nothing (a coordinator stopping), one that
// refuses the key, one that resets every connection. In each case the loop
// must pause between claims (no tight loop), warn once per distinct
// condition, and write one events line per condition, not one per claim.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "protocol/util/child_process.h"
#include "tests/client/fake_coordinator.h"
#include "tests/support/test_dir.h"

namespace scimesh::launcher {
namespace {

using scimesh::testing::FakeCoordinator;
using scimesh::testing::RecordedRequest;
using scimesh::testing::Reply;

constexpr char kToken[] = "claim-loop-test-token-0123456789abcdef";
constexpr auto kWatched = std::chrono::seconds(4);

bool IsClaim(const RecordedRequest& r) { return r.method == "POST" && r.path == "/v1/api/steps/claim"; }

struct Observed {
  size_t claims = 0;             // claim requests the coordinator saw
  size_t claim_lines = 0;        // "claim" and "claim_failed" lines in the events file
  size_t warnings = 0;           // warning lines in the launcher's log
  std::string log;
};

size_t CountLines(const std::string& text, const std::string& part) {
  std::istringstream in(text);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(part) != std::string::npos;
  return n;
}

class ClaimLoopTest : public ::testing::Test {
 protected:
  // Runs scimesh-launch against `fake` for kWatched, then SIGTERM (a drain).
  Observed Watch(FakeCoordinator& fake) {
    const std::string defs = dir_ / "defs.json";
    TestDir::Write(defs, R"({"workflow":"loop","version":"1","steps":[{"id":"a","run":{"argv":["true"]}}]})");
    ChildSpec spec;
    spec.argv = {SCIMESH_LAUNCH_BIN, "--definitions", defs, "--backend", "local", "--spool", dir_ / "spool",
                 "--events", dir_ / "events.jsonl", "--url", fake.url(), "--idle-exit", "0", "--wait-ms", "20000"};
    spec.env = {{"SCIMESH_TOKEN", kToken}};
    spec.unset = [](std::string_view name) { return name.rfind("SCIMESH_", 0) == 0; };
    const std::string log_path = dir_ / "launcher.log";
    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    spec.stderr_fd = log;
    auto pid = SpawnChild(spec);
    ::close(log);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    if (!pid.ok()) return {};
    std::this_thread::sleep_for(kWatched);
    Observed seen;
    seen.claims = fake.server().Count(IsClaim);
    ::kill(*pid, SIGTERM);
    const auto exit = WaitChild(*pid);
    EXPECT_TRUE(exit && !exit->signaled) << "the launcher did not exit on SIGTERM";
    seen.log = TestDir::Read(log_path);
    seen.warnings = CountLines(seen.log, "[warning]");
    seen.claim_lines = CountLines(TestDir::Read(dir_ / "events.jsonl"), "\"event\":\"claim");
    return seen;
  }

  TestDir dir_;
};

// Before: 1,000s of claims in a few seconds, one events line each.
TEST_F(ClaimLoopTest, EmptyClaimsAnsweredAtOnceArePacedAndFolded) {
  FakeCoordinator fake(kToken);
  fake.SetIntercept([](const RecordedRequest& r) -> std::optional<Reply> {
    if (IsClaim(r)) return Reply::Json(200, R"({"leases":[]})");
    return std::nullopt;
  });
  Observed seen = Watch(fake);
  // 100 ms doubling: about 6 claims in 4 s; far from a tight loop.
  EXPECT_GE(seen.claims, 3u) << seen.log;
  EXPECT_LE(seen.claims, 10u) << seen.log;
  EXPECT_LE(seen.claim_lines, 2u) << "one line for the condition, one for its repeats";
}

// Before: a warning for every claim, every 2 s.
TEST_F(ClaimLoopTest, ARefusedKeyIsWarnedOnceAndPaced) {
  FakeCoordinator fake(kToken);
  fake.SetIntercept([](const RecordedRequest& r) -> std::optional<Reply> {
    if (IsClaim(r)) {
      return Reply::Json(401, R"({"error":"unauthorized","message":"unknown key"})");
    }
    return std::nullopt;
  });
  Observed seen = Watch(fake);
  EXPECT_GE(seen.claims, 2u) << seen.log;
  EXPECT_LE(seen.claims, 4u) << seen.log;  // 1 s, 2 s: three claims in 4 s
  EXPECT_EQ(CountLines(seen.log, "claim answered 401"), 1u) << seen.log;
  EXPECT_EQ(seen.warnings, 1u) << seen.log;
  EXPECT_LE(seen.claim_lines, 2u);
}

// Before: a warning for every retry of the client.
TEST_F(ClaimLoopTest, ResetConnectionsAreRetriedWithBackoffAndWarnedOnce) {
  FakeCoordinator fake(kToken);
  fake.SetIntercept([](const RecordedRequest& r) -> std::optional<Reply> {
    if (IsClaim(r)) return Reply::Reset();
    return std::nullopt;
  });
  Observed seen = Watch(fake);
  // The client's backoff (200 ms doubling, jittered): a handful in 4 s.
  EXPECT_GE(seen.claims, 2u) << seen.log;
  EXPECT_LE(seen.claims, 8u) << seen.log;
  EXPECT_EQ(seen.warnings, 1u) << seen.log;
}

}  // namespace
}  // namespace scimesh::launcher
