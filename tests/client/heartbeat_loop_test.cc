// HeartbeatLoop against the hostile server: keeps the new expiry, rewrites the
// state file, and cancels on fenced, run_terminal and a passed deadline.
#include "protocol/heartbeat_loop.h"

#include <atomic>
#include <filesystem>

#include <gtest/gtest.h>

#include "protocol/lease_state.h"
#include "tests/client/hostile_server.h"

namespace scimesh {
namespace {

using testing::Call;
using testing::HostileServer;
using testing::RecordedRequest;
using testing::Reply;

class HeartbeatLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "scimesh-hb-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    state_path_ = dir_ + "/lease.state";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Client> ClientFor(const HostileServer& s) {
    ClientOptions o;
    o.coordinator_url = s.url();
    o.token = Token("tok-hb");
    o.backoff = BackoffPolicy{Millis(20), 2.0, 0.5, Millis(100)};
    return Client::Create(o).value();
  }

  HeartbeatConfig Config(Millis interval, Millis ttl) {
    HeartbeatConfig c;
    c.call = LeaseCall{"l_00000000000000d1", 2, "w/1", std::nullopt};
    c.interval = interval;
    c.deadline = LeaseDeadline::FromTtl(std::chrono::steady_clock::now(), ttl);
    c.lease_expires_at = "2026-11-29T08:00:30.000Z";
    c.state_path = state_path_;
    c.holder = LeaseHolder::kRank0;
    return c;
  }

  std::string dir_, state_path_;
};

std::string Extend(int64_t ttl_ms) {
  return R"({"lease_expires_at":"2026-11-29T08:00:41.300Z","lease_ttl_ms":)" + std::to_string(ttl_ms) + "}";
}

TEST_F(HeartbeatLoopTest, BeatsKeepTheNewExpiryAndRewriteTheStateFile) {
  // Each answer grants 5 s: far more than the initial 300 ms, so only a loop
  // that keeps the new expiry survives past 300 ms.
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, Extend(5000)); });
  auto client = ClientFor(*server);
  auto token = std::make_shared<CancellationToken>();
  HeartbeatLoop loop(*client, Config(Millis(50), Millis(300)), token);
  ASSERT_TRUE(loop.Start().ok());
  ASSERT_TRUE(server->WaitForCount(4, Millis(5000)));
  // Past the first deadline, still held.
  EXPECT_FALSE(token->WaitFor(Millis(400)));
  const MonoTime now = std::chrono::steady_clock::now();
  EXPECT_GT(loop.deadline().at(), now + Millis(3000));
  auto state = ReadLeaseState(state_path_);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->state, LeaseHold::kHeld);
  EXPECT_EQ(state->holder, LeaseHolder::kRank0);
  EXPECT_EQ(state->attempt, 2);
  EXPECT_EQ(state->lease_expires_at, "2026-11-29T08:00:41.300Z");
  EXPECT_EQ(state->deadline_mono_ms, MonoMillis(loop.deadline().at()));
  EXPECT_GE(state->seq, 4);
  loop.Stop();
  loop.MarkDone();
  EXPECT_EQ(ReadLeaseState(state_path_)->state, LeaseHold::kDone);
  // Every beat names the lease, the attempt and the worker.
  for (const auto& r : server->requests()) {
    EXPECT_EQ(r.path, "/v1/api/steps/l_00000000000000d1/heartbeat");
    EXPECT_NE(r.body.find(R"("worker_id":"w/1","attempt":2)"), std::string::npos) << r.body;
  }
}

TEST_F(HeartbeatLoopTest, ProgressTravelsWithTheNextBeatOnly) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, Extend(5000)); });
  auto client = ClientFor(*server);
  auto token = std::make_shared<CancellationToken>();
  HeartbeatLoop loop(*client, Config(Millis(50), Millis(5000)), token);
  loop.SetProgress(R"({"iteration":120})");
  ASSERT_TRUE(loop.Start().ok());
  ASSERT_TRUE(server->WaitForCount(2, Millis(5000)));
  loop.Stop();
  auto reqs = server->requests();
  EXPECT_NE(reqs[0].body.find(R"("progress":{"iteration":120})"), std::string::npos) << reqs[0].body;
  EXPECT_EQ(reqs[1].body.find("progress"), std::string::npos) << reqs[1].body;
}

TEST_F(HeartbeatLoopTest, EachLossReasonCancelsTheTokenAndIsWrittenDown) {
  for (const auto& [name, reason] : std::vector<std::pair<std::string, CancelReason>>{
           {"fenced", CancelReason::kFenced}, {"run_terminal", CancelReason::kRunTerminal}}) {
    std::atomic<int> n{0};
    auto server = HostileServer::Start([&](const RecordedRequest&) {
      if (n++ < 2) return Reply::Json(200, Extend(5000));
      return Reply::Json(409, R"({"error":"conflict","reason":")" + name + R"(","message":"x"})");
    });
    auto client = ClientFor(*server);
    auto token = std::make_shared<CancellationToken>();
    HeartbeatLoop loop(*client, Config(Millis(30), Millis(5000)), token);
    ASSERT_TRUE(loop.Start().ok());
    ASSERT_TRUE(token->WaitFor(Millis(5000))) << name;
    EXPECT_EQ(token->reason(), reason);
    loop.Stop();
    EXPECT_EQ(server->requests().size(), 3u) << "no beat after " << name;
    auto state = ReadLeaseState(state_path_);
    ASSERT_TRUE(state.ok());
    EXPECT_EQ(state->state, LeaseHold::kLost);
    EXPECT_EQ(state->reason, reason);
  }
}

TEST_F(HeartbeatLoopTest, AlreadyAppliedMeansDoneNotLost) {
  auto server = HostileServer::Start([](const RecordedRequest&) {
    return Reply::Json(409, R"({"error":"conflict","reason":"already_applied","outcome":"completed","message":"x"})");
  });
  auto client = ClientFor(*server);
  auto token = std::make_shared<CancellationToken>();
  HeartbeatLoop loop(*client, Config(Millis(30), Millis(5000)), token);
  ASSERT_TRUE(loop.Start().ok());
  ASSERT_TRUE(token->WaitFor(Millis(5000)));
  EXPECT_EQ(token->reason(), CancelReason::kAlreadyApplied);
  loop.Stop();
  EXPECT_EQ(ReadLeaseState(state_path_)->state, LeaseHold::kDone);
}

TEST_F(HeartbeatLoopTest, ADeadlinePassedWithoutASuccessfulBeatExpiresTheLease) {
  // The coordinator answers nothing: each beat stalls past the deadline.
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Stall(Millis(10000)); });
  auto client = ClientFor(*server);
  auto token = std::make_shared<CancellationToken>();
  const HeartbeatConfig config = Config(Millis(50), Millis(400));
  HeartbeatLoop loop(*client, config, token);
  ASSERT_TRUE(loop.Start().ok());
  ASSERT_TRUE(token->WaitFor(Millis(5000)));
  EXPECT_EQ(token->reason(), CancelReason::kExpired);
  // Never declared lost before the deadline it had.
  EXPECT_GE(std::chrono::steady_clock::now(), config.deadline.at());
  loop.Stop();
  auto state = ReadLeaseState(state_path_);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->state, LeaseHold::kLost);
  EXPECT_EQ(state->reason, CancelReason::kExpired);
}

TEST_F(HeartbeatLoopTest, RefusedBeatsAreRetriedUntilTheDeadlineDecides) {
  // 401 is not retried inside the call; the loop tries again next interval.
  auto server = HostileServer::Start([](const RecordedRequest&) {
    return Reply::Json(401, R"({"error":"unauthorized","message":"unknown key"})");
  });
  auto client = ClientFor(*server);
  auto token = std::make_shared<CancellationToken>();
  HeartbeatLoop loop(*client, Config(Millis(50), Millis(500)), token);
  ASSERT_TRUE(loop.Start().ok());
  ASSERT_TRUE(token->WaitFor(Millis(5000)));
  EXPECT_EQ(token->reason(), CancelReason::kExpired);
  loop.Stop();
  EXPECT_GE(server->requests().size(), 3u);
}

TEST_F(HeartbeatLoopTest, StopReturnsPromptlyDuringAStalledBeat) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Stall(Millis(20000)); });
  auto client = ClientFor(*server);
  auto token = std::make_shared<CancellationToken>();
  auto loop = std::make_unique<HeartbeatLoop>(*client, Config(Millis(10), Millis(15000)), token);
  ASSERT_TRUE(loop->Start().ok());
  ASSERT_TRUE(server->WaitFor(Call("POST", "/heartbeat"), Millis(5000)));
  loop->Stop();  // must not wait for the 20 s stall or the 15 s deadline
  EXPECT_FALSE(token->cancelled());
  // The client is usable again after the loop released it.
  server->SetHandler([](const RecordedRequest&) { return Reply::Json(200, Extend(1000)); });
  auto again = client->Heartbeat(LeaseCall{"l_00000000000000d1", 2, "w/1", std::nullopt});
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

}  // namespace
}  // namespace scimesh
