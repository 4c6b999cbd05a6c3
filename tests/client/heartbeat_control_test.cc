// Both HeartbeatControl implementations, HeartbeatLoop (a thread per lease)
// and a HeartbeatHub handle (one thread for many), against the hostile
// server, by the same tests: they keep the new expiry, rewrite the state
// file, cancel on fenced, run_terminal and a passed deadline, and follow a
// take-over by another holder.
#include "protocol/runtime/heartbeat_hub.h"
#include "protocol/runtime/heartbeat_loop.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <filesystem>

#include <gtest/gtest.h>

#include "protocol/attempt/lease_state.h"
#include "tests/client/hostile_server.h"

namespace scimesh {
namespace {

using testing::Call;
using testing::HostileServer;
using testing::RecordedRequest;
using testing::Reply;

enum class Keeper { kLoop, kHub };

class HeartbeatControlTest : public ::testing::TestWithParam<Keeper> {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "scimesh-hb-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    state_path_ = dir_ + "/lease.state";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ClientOptions OptionsFor(const HostileServer& s) {
    ClientOptions o;
    o.coordinator_url = s.url();
    o.token = Token("tok-hb");
    o.backoff = BackoffPolicy{Millis(20), 2.0, 0.5, Millis(100)};
    o.max_response_bytes = max_response_bytes_;
    o.clock = clock_;
    return o;
  }

  // The lease kept by the implementation under test, beating against `s`.
  std::unique_ptr<HeartbeatControl> Keep(const HostileServer& s, HeartbeatConfig c,
                                         std::shared_ptr<CancellationToken> token) {
    if (GetParam() == Keeper::kLoop) {
      client_ = Client::Create(OptionsFor(s)).value();
      return std::make_unique<HeartbeatLoop>(*client_, std::move(c), std::move(token));
    }
    hub_ = HeartbeatHub::Create(OptionsFor(s)).value();
    return hub_->Add(std::move(c), std::move(token));
  }

  // Keeps a lease beating every 50 ms against `s` until its deadline (`ttl`
  // from now) ends it, as it must when no beat succeeds; on a ManualClock
  // moved 10 ms at a time, so the lease is seen to end once its clock
  // passes the deadline and not before, however slow the machine. Returns
  // its beats().
  int64_t BeatUntilExpired(const HostileServer& s, Millis ttl) {
    UseManualClock();
    auto token = std::make_shared<CancellationToken>();
    auto keeper = Keep(s, Config(Millis(50), ttl), token);
    const MonoTime deadline = manual_.Now() + ttl;
    EXPECT_TRUE(keeper->Start().ok());
    const auto give_up = std::chrono::steady_clock::now() + Millis(10000);
    while (!token->WaitFor(Millis(2)) && std::chrono::steady_clock::now() < give_up) {
      EXPECT_LT(manual_.Now(), deadline + kMinBeatGap + Millis(20)) << "still held well past its deadline";
      manual_.Advance(Millis(10));
    }
    EXPECT_TRUE(token->cancelled());
    EXPECT_EQ(token->reason(), CancelReason::kExpired);
    EXPECT_GE(manual_.Now(), deadline) << "lost before its deadline";
    keeper->Stop();
    return keeper->beats();
  }

  HeartbeatConfig Config(Millis interval, Millis ttl) {
    HeartbeatConfig c;
    c.call = LeaseCall{"l_00000000000000d1", 2, "w/1", std::nullopt};
    c.interval = interval;
    c.deadline = LeaseDeadline::FromTtl(ClockOr(clock_).Now(), ttl);
    c.lease_expires_at = "2026-11-29T08:00:30.000Z";
    c.state_path = state_path_;
    c.holder = LeaseHolder::kRank0;
    return c;
  }

  // Tests on a ManualClock set this before Keep() and Config().
  void UseManualClock() { clock_ = &manual_; }

  std::string dir_, state_path_;
  ManualClock manual_;
  const Clock* clock_ = nullptr;  // nullptr: the steady clock
  std::unique_ptr<Client> client_;
  std::unique_ptr<HeartbeatHub> hub_;
  size_t max_response_bytes_ = 64u << 20;
};

std::string Extend(int64_t ttl_ms) {
  return R"({"lease_expires_at":"2026-11-29T08:00:41.300Z","lease_ttl_ms":)" + std::to_string(ttl_ms) + "}";
}

TEST_P(HeartbeatControlTest, BeatsKeepTheNewExpiryAndRewriteTheStateFile) {
  // Each answer grants 5 s: far more than the initial 300 ms, so only a loop
  // that keeps the new expiry survives past 300 ms.
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, Extend(5000)); });
  auto token = std::make_shared<CancellationToken>();
  auto loop = Keep(*server, Config(Millis(50), Millis(300)), token);
  ASSERT_TRUE(loop->Start().ok());
  ASSERT_TRUE(server->WaitForCount(4, Millis(5000)));
  // Past the first deadline, still held.
  EXPECT_FALSE(token->WaitFor(Millis(400)));
  const MonoTime now = std::chrono::steady_clock::now();
  EXPECT_GT(loop->deadline().at(), now + Millis(3000));
  auto state = ReadLeaseState(state_path_);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->state, LeaseHold::kHeld);
  EXPECT_EQ(state->holder, LeaseHolder::kRank0);
  EXPECT_EQ(state->attempt, 2);
  EXPECT_EQ(state->lease_expires_at, "2026-11-29T08:00:41.300Z");
  EXPECT_EQ(state->deadline_mono_ms, MonoMillis(loop->deadline().at()));
  EXPECT_GE(state->seq, 4);
  loop->Stop();
  loop->MarkDone();
  EXPECT_EQ(ReadLeaseState(state_path_)->state, LeaseHold::kDone);
  // Every beat names the lease, the attempt and the worker.
  for (const auto& r : server->requests()) {
    EXPECT_EQ(r.path, "/v1/api/steps/l_00000000000000d1/heartbeat");
    EXPECT_NE(r.body.find(R"("worker_id":"w/1","attempt":2)"), std::string::npos) << r.body;
  }
}

TEST_P(HeartbeatControlTest, ProgressTravelsWithTheNextBeatOnly) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, Extend(5000)); });
  auto token = std::make_shared<CancellationToken>();
  auto loop = Keep(*server, Config(Millis(50), Millis(5000)), token);
  loop->SetProgress(R"({"iteration":120})");
  ASSERT_TRUE(loop->Start().ok());
  ASSERT_TRUE(server->WaitForCount(2, Millis(5000)));
  loop->Stop();
  auto reqs = server->requests();
  EXPECT_NE(reqs[0].body.find(R"("progress":{"iteration":120})"), std::string::npos) << reqs[0].body;
  EXPECT_EQ(reqs[1].body.find("progress"), std::string::npos) << reqs[1].body;
}

TEST_P(HeartbeatControlTest, EachLossReasonCancelsTheTokenAndIsWrittenDown) {
  for (const auto& [name, reason] : std::vector<std::pair<std::string, CancelReason>>{
           {"fenced", CancelReason::kFenced}, {"run_terminal", CancelReason::kRunTerminal}}) {
    std::atomic<int> n{0};
    const std::string refusal = R"({"error":"conflict","reason":")" + name + R"(","message":"x"})";
    auto server = HostileServer::Start([&](const RecordedRequest&) {
      if (n++ < 2) return Reply::Json(200, Extend(5000));
      return Reply::Json(409, refusal);
    });
    auto token = std::make_shared<CancellationToken>();
    auto loop = Keep(*server, Config(Millis(30), Millis(5000)), token);
    ASSERT_TRUE(loop->Start().ok());
    ASSERT_TRUE(token->WaitFor(Millis(5000))) << name;
    EXPECT_EQ(token->reason(), reason);
    loop->Stop();
    EXPECT_EQ(server->requests().size(), 3u) << "no beat after " << name;
    auto state = ReadLeaseState(state_path_);
    ASSERT_TRUE(state.ok());
    EXPECT_EQ(state->state, LeaseHold::kLost);
    EXPECT_EQ(state->reason, reason);
  }
}

TEST_P(HeartbeatControlTest, AlreadyAppliedMeansDoneNotLost) {
  auto server = HostileServer::Start([](const RecordedRequest&) {
    return Reply::Json(409, R"({"error":"conflict","reason":"already_applied","outcome":"completed","message":"x"})");
  });
  auto token = std::make_shared<CancellationToken>();
  auto loop = Keep(*server, Config(Millis(30), Millis(5000)), token);
  ASSERT_TRUE(loop->Start().ok());
  ASSERT_TRUE(token->WaitFor(Millis(5000)));
  EXPECT_EQ(token->reason(), CancelReason::kAlreadyApplied);
  loop->Stop();
  EXPECT_EQ(ReadLeaseState(state_path_)->state, LeaseHold::kDone);
}

// On a manual clock: however long the wall clock runs, the lease is not
// lost before its deadline; once the clock passes it, it is.
TEST_P(HeartbeatControlTest, ADeadlinePassedWithoutASuccessfulBeatExpiresTheLease) {
  UseManualClock();
  // The coordinator answers nothing: each beat stalls until its try's cap.
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Stall(Millis(10000)); });
  auto token = std::make_shared<CancellationToken>();
  const HeartbeatConfig config = Config(Millis(50), Millis(400));
  auto loop = Keep(*server, config, token);
  ASSERT_TRUE(loop->Start().ok());
  manual_.Advance(Millis(50));  // the first beat is due
  ASSERT_TRUE(server->WaitForCount(1, Millis(5000)));
  EXPECT_FALSE(token->WaitFor(Millis(600))) << "lost before its deadline on the lease's clock";
  manual_.Advance(Millis(349));
  EXPECT_FALSE(token->WaitFor(Millis(200))) << "lost 1 ms before its deadline";
  // Past it by more than the shortest gap between two looks (kMinBeatGap).
  manual_.Advance(kMinBeatGap + Millis(2));
  ASSERT_TRUE(token->WaitFor(Millis(5000)));
  EXPECT_EQ(token->reason(), CancelReason::kExpired);
  loop->Stop();
  auto state = ReadLeaseState(state_path_);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->state, LeaseHold::kLost);
  EXPECT_EQ(state->reason, CancelReason::kExpired);
}

// On a manual clock: a beat goes out when the lease's clock reaches it, not
// when the wall clock does, and the deadline it earns is measured from its
// send on the same clock.
TEST_P(HeartbeatControlTest, BeatsFollowTheLeasesClockNotTheWallClock) {
  UseManualClock();
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, Extend(5000)); });
  auto token = std::make_shared<CancellationToken>();
  auto loop = Keep(*server, Config(Millis(1000), Millis(30000)), token);
  ASSERT_TRUE(loop->Start().ok());
  EXPECT_FALSE(server->WaitForCount(1, Millis(500))) << "a beat before the clock reached its time";
  const MonoTime sent = manual_.Now() + Millis(1000);
  manual_.Advance(Millis(1000));
  ASSERT_TRUE(server->WaitForCount(1, Millis(5000)));
  for (int i = 0; i < 500 && loop->beats() < 1; ++i) std::this_thread::sleep_for(Millis(10));
  ASSERT_EQ(loop->beats(), 1);
  EXPECT_EQ(loop->deadline().at(), sent + Millis(5000));
  EXPECT_FALSE(server->WaitForCount(2, Millis(300))) << "a second beat while the clock stood still";
  EXPECT_FALSE(token->cancelled());
  loop->Stop();
}

TEST_P(HeartbeatControlTest, RefusedBeatsAreRetriedUntilTheDeadlineDecides) {
  // 401 is not retried inside the call; the loop tries again next interval.
  auto server = HostileServer::Start([](const RecordedRequest&) {
    return Reply::Json(401, R"({"error":"unauthorized","message":"unknown key"})");
  });
  EXPECT_EQ(BeatUntilExpired(*server, Millis(500)), 0);
  EXPECT_GE(server->requests().size(), 3u);
}

TEST_P(HeartbeatControlTest, StopReturnsPromptlyDuringAStalledBeat) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Stall(Millis(20000)); });
  auto token = std::make_shared<CancellationToken>();
  auto loop = Keep(*server, Config(Millis(10), Millis(15000)), token);
  ASSERT_TRUE(loop->Start().ok());
  ASSERT_TRUE(server->WaitFor(Call("POST", "/heartbeat"), Millis(5000)));
  loop->Stop();  // must not wait for the 20 s stall or the 15 s deadline
  EXPECT_FALSE(token->cancelled());
  // What beat for the lease is usable again: the loop's client, the hub.
  server->SetHandler([](const RecordedRequest&) { return Reply::Json(200, Extend(1000)); });
  if (client_ != nullptr) {
    auto again = client_->Heartbeat(LeaseCall{"l_00000000000000d1", 2, "w/1", std::nullopt});
    EXPECT_TRUE(again.ok()) << again.status().ToString();
  } else {
    auto other = hub_->Add(Config(Millis(10), Millis(15000)), std::make_shared<CancellationToken>());
    ASSERT_TRUE(other->Start().ok());
    ASSERT_TRUE(server->WaitForCount(3, Millis(5000)));
    other->Stop();
    EXPECT_GE(other->beats(), 1);
  }
}

TEST_P(HeartbeatControlTest, PausesForATakeOverAndEndsWhenTheTakerLostTheLease) {
  // The third beat is answered only once rank 0's word is in the state file,
  // so no write of the keeper's can race the test's.
  std::atomic<int> n{0};
  std::mutex mu;
  std::condition_variable cv;
  bool written = false;
  auto server = HostileServer::Start([&](const RecordedRequest&) {
    if (n++ >= 2) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return written; });
    }
    return Reply::Json(200, Extend(5000));
  });
  auto token = std::make_shared<CancellationToken>();
  HeartbeatConfig config = Config(Millis(30), Millis(5000));
  config.holder = LeaseHolder::kWorker;
  config.yields_to = LeaseHolder::kRank0;
  auto loop = Keep(*server, config, token);
  ASSERT_TRUE(loop->Start().ok());
  ASSERT_TRUE(server->WaitForCount(3, Millis(5000)));
  // Rank 0 takes the lease over, then loses it: the keeper must not beat
  // over that, and its token says why.
  LeaseState lost = ReadLeaseState(state_path_).value();
  lost.holder = LeaseHolder::kRank0;
  lost.state = LeaseHold::kLost;
  lost.reason = CancelReason::kRunTerminal;
  lost.seq += 100;
  ASSERT_TRUE(WriteLeaseState(state_path_, lost).ok());
  {
    std::lock_guard<std::mutex> lock(mu);
    written = true;
  }
  cv.notify_all();
  ASSERT_TRUE(token->WaitFor(Millis(5000)));
  EXPECT_EQ(token->reason(), CancelReason::kRunTerminal);
  loop->Stop();
  auto state = ReadLeaseState(state_path_);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->holder, LeaseHolder::kRank0) << "the taker's word is never overwritten";
  EXPECT_EQ(state->state, LeaseHold::kLost);
}

TEST_P(HeartbeatControlTest, HeldAloneBeatsWithoutRewritingTheStateFileButStillWritesItsEnd) {
  // A state file saying rank 0 took over: a keeper held alone neither reads
  // it (no yield) nor rewrites it after each beat; its end is still written.
  std::atomic<int> n{0};
  auto server = HostileServer::Start([&](const RecordedRequest&) {
    if (n++ < 6) return Reply::Json(200, Extend(5000));
    return Reply::Json(409, R"({"error":"conflict","reason":"fenced","message":"x"})");
  });
  auto token = std::make_shared<CancellationToken>();
  HeartbeatConfig config = Config(Millis(30), Millis(5000));
  config.holder = LeaseHolder::kWorker;
  config.yields_to = LeaseHolder::kRank0;
  auto keeper = Keep(*server, config, token);
  keeper->HoldAlone();
  ASSERT_TRUE(keeper->Start().ok());
  LeaseState planted = ReadLeaseState(state_path_).value();
  planted.holder = LeaseHolder::kRank0;
  planted.seq = 1000;
  ASSERT_TRUE(WriteLeaseState(state_path_, planted).ok());
  ASSERT_TRUE(server->WaitForCount(5, Millis(5000))) << "it yielded to the planted take-over";
  auto during = ReadLeaseState(state_path_);
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(during->seq, 1000) << "a beat rewrote the state file";
  ASSERT_TRUE(token->WaitFor(Millis(5000)));
  EXPECT_EQ(token->reason(), CancelReason::kFenced);
  keeper->Stop();
  auto end = ReadLeaseState(state_path_);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->state, LeaseHold::kLost);
  EXPECT_EQ(end->holder, LeaseHolder::kWorker);
}

TEST_P(HeartbeatControlTest, ResumeAfterPauseBeatsAtOnceWithTheGivenDeadline) {
  // The beat stalls, so the state file keeps what Resume wrote.
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Stall(Millis(20000)); });
  auto token = std::make_shared<CancellationToken>();
  // A long interval: after Resume only "beat at once" explains a quick beat.
  auto loop = Keep(*server, Config(Millis(60000), Millis(120000)), token);
  loop->Pause();
  ASSERT_TRUE(loop->Start().ok());
  const MonoTime given = std::chrono::steady_clock::now() + Millis(90000);
  loop->Resume(LeaseDeadline::At(given));
  ASSERT_TRUE(server->WaitForCount(1, Millis(5000)));
  loop->Stop();
  auto state = ReadLeaseState(state_path_);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->state, LeaseHold::kHeld);
  EXPECT_EQ(state->deadline_mono_ms, MonoMillis(given));
  EXPECT_FALSE(token->cancelled());
}

TEST_P(HeartbeatControlTest, ARedirectIsNeverFollowedSoTheTokenStaysHome) {
  auto elsewhere =
      HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, Extend(5000)); }, "127.0.0.2");
  auto server = HostileServer::Start(
      [&](const RecordedRequest& r) { return Reply::Redirect(307, elsewhere->url() + r.target); });
  // A redirected beat is a failed beat: only the deadline ends the lease.
  EXPECT_EQ(BeatUntilExpired(*server, Millis(400)), 0);
  EXPECT_GE(server->requests().size(), 2u);
  EXPECT_EQ(elsewhere->requests().size(), 0u) << "a beat (and its token) went to another host";
}

TEST_P(HeartbeatControlTest, AnAnswerOverTheSizeLimitIsNotABeat) {
  // Valid JSON padded with whitespace past the limit: only the limit refuses it.
  auto server = HostileServer::Start(
      [](const RecordedRequest&) { return Reply::Json(200, Extend(5000) + std::string(4096, ' ')); });
  max_response_bytes_ = 1024;
  EXPECT_EQ(BeatUntilExpired(*server, Millis(400)), 0);
}

TEST_P(HeartbeatControlTest, TransportFailuresAndServerErrorsAreRetriedWithinTheBeat) {
  std::atomic<int> n{0};
  auto server = HostileServer::Start([&](const RecordedRequest&) {
    const int i = n++;
    if (i == 0) return Reply::Reset();
    if (i == 1) return Reply::Json(503, R"({"error":"unavailable","message":"busy"})");
    return Reply::Json(200, Extend(20000));
  });
  auto token = std::make_shared<CancellationToken>();
  HeartbeatConfig config = Config(Millis(60000), Millis(10000));
  config.granted_at = std::chrono::steady_clock::now() - Millis(60000);  // the first beat is due now
  auto loop = Keep(*server, config, token);
  ASSERT_TRUE(loop->Start().ok());
  ASSERT_TRUE(server->WaitForCount(3, Millis(5000)));
  // No condition to wait on for the third answer's effect: poll, bounded.
  const MonoTime until = std::chrono::steady_clock::now() + Millis(5000);
  while (loop->beats() < 1 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(Millis(5));
  }
  EXPECT_EQ(loop->beats(), 1) << "one beat, three tries";
  loop->Stop();
  EXPECT_FALSE(token->cancelled());
  EXPECT_EQ(server->requests().size(), 3u);
  EXPECT_GT(loop->deadline().at(), config.deadline.at());
}

INSTANTIATE_TEST_SUITE_P(Keepers, HeartbeatControlTest, ::testing::Values(Keeper::kLoop, Keeper::kHub),
                         [](const ::testing::TestParamInfo<Keeper>& i) {
                           return std::string(i.param == Keeper::kLoop ? "Loop" : "Hub");
                         });

}  // namespace
}  // namespace scimesh
