// Integration: the event-driven front end under abusive and numerous clients —
// trickling heads and bodies, hundreds of held claims, connection caps,
// malformed framing — while health and lease calls keep being answered.
// Each scenario starved or stalled the thread-per-connection server.
#include <atomic>
#include <thread>
#include <vector>

#include "coordinator_fixture.h"
#include "raw_connection.h"

namespace scimesh::coordinator::testing {
namespace {

// A bound on waiting for an answer that a healthy server gives at once; only
// a server that cannot answer at all comes near it.
constexpr int kAnswerWithinMs = 10000;

int StatusOf(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

// One request on its own connection: the status (0: no answer in time).
int RawStatus(int port, const std::string& request, std::string* response = nullptr) {
  RawConnection c(port);
  if (!c.ok() || !c.Send(request)) return 0;
  std::string got = c.ReadResponse(kAnswerWithinMs);
  if (response != nullptr) *response = got;
  return StatusOf(got);
}

std::string HealthRequest() { return "GET /v1/api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"; }

std::string HeartbeatRequest(const std::string& token, const std::string& lease, const std::string& worker) {
  return PostRequest("/v1/api/steps/" + lease + "/heartbeat", token,
                     R"({"worker_id":")" + worker + R"(","attempt":1})");
}

class FrontEnd : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.lease_ttl_ms = 3000;
    o.heartbeat_ms = 1000;
    o.grace_ms = 1000;
    // Tricklers must stay for the whole scenario: the head deadline is not
    // what keeps the server answering here.
    o.extra_args = {"--head-timeout-ms", "120000", "--unauthenticated-timeout-ms", "120000"};
    return o;
  }

  // worker-1 registered, a run started, its one step claimed and started.
  LeaseRef StartedLease() {
    RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
    StartRunOrEmpty("wf");
    LeaseRef l = ClaimOne(*w1_, "worker-1");
    EXPECT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
    return l;
  }
};

TEST_F(FrontEnd, NegativeContentLengthIs400AtOnce) {
  std::string response;
  int status = RawStatus(process_->port(),
                         "POST /v1/api/steps/claim HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                             process_->token("w1") + "\r\nContent-Length: -5\r\n\r\n",
                         &response);
  EXPECT_EQ(status, 400) << response;
  EXPECT_EQ(RawStatus(process_->port(), HealthRequest()), 200);
}

TEST_F(FrontEnd, HeartbeatsAndHealthAreAnsweredWhile150ConnectionsTrickleTheirHeads) {
  LeaseRef lease = StartedLease();
  std::vector<RawConnection> tricklers;
  for (int i = 0; i < 150; ++i) {
    tricklers.emplace_back(process_->port());
    ASSERT_TRUE(tricklers.back().ok());
    ASSERT_TRUE(tricklers.back().Send("POST /v1/api/steps/claim HTTP/1.1\r\nX-Slow: "));
  }
  // Six TTL-halves of trickling: each connection sends one more header byte
  // every 300 ms (never the end of the head), while the worker heartbeats.
  int heartbeats = 0;
  for (int round = 0; round < 12; ++round) {
    for (int tick = 0; tick < 2; ++tick) {
      for (auto& t : tricklers) t.Send("a");
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    std::string response;
    ASSERT_EQ(RawStatus(process_->port(), HeartbeatRequest(process_->token("w1"), lease.lease_id, "worker-1"),
                        &response),
              200)
        << "heartbeat " << round << " while 150 connections trickle: " << response;
    ++heartbeats;
    ASSERT_EQ(RawStatus(process_->port(), HealthRequest()), 200) << "health, round " << round;
  }
  EXPECT_EQ(heartbeats, 12);
  size_t still_open = 0;
  for (auto& t : tricklers) {
    t.Poll();
    if (!t.closed()) ++still_open;
  }
  EXPECT_EQ(still_open, tricklers.size()) << "the tricklers were held, not shed";
  EXPECT_EQ(w1_->Complete(lease.lease_id, "worker-1", 1).status, 200) << "the lease was never fenced";
}

TEST_F(FrontEnd, HealthAndLeaseCallsAreAnsweredWhile200ClaimsAreHeld) {
  LeaseRef lease = StartedLease();
  const std::string claim = PostRequest("/v1/api/steps/claim", process_->token("w1"),
                                        R"({"worker_id":"worker-1","max":1,"wait_ms":20000})");
  std::vector<RawConnection> held;
  for (int i = 0; i < 200; ++i) {
    held.emplace_back(process_->port());
    ASSERT_TRUE(held.back().ok());
    ASSERT_TRUE(held.back().Send(claim));
  }
  // Every claim has nothing to offer: each is held, none answered.
  EXPECT_EQ(RawStatus(process_->port(), HealthRequest()), 200);
  EXPECT_EQ(RawStatus(process_->port(), HeartbeatRequest(process_->token("w1"), lease.lease_id, "worker-1")), 200);
  EXPECT_EQ(w1_->Complete(lease.lease_id, "worker-1", 1).status, 200);
  size_t unanswered = 0;
  for (auto& c : held) {
    if (c.Poll().empty() && !c.closed()) ++unanswered;
  }
  EXPECT_EQ(unanswered, held.size()) << "health and lease calls were answered while every claim was held";

  // New work wakes the held claims: exactly one of them gets the lease.
  std::string run = StartRunOrEmpty("wf");
  ASSERT_FALSE(run.empty());
  const std::string first_attempt = R"("run_id":")" + run + R"(","step_id":"s","workflow":"wf","version":"1","attempt":1,)";
  size_t with_lease = 0;
  for (int i = 0; i < 200 && with_lease == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (auto& c : held) {
      std::string got = c.Poll();
      if (!got.empty()) got = c.ReadResponse(kAnswerWithinMs, got);
      if (got.find(first_attempt) != std::string::npos) ++with_lease;
    }
  }
  EXPECT_EQ(with_lease, 1u);
}

TEST_F(FrontEnd, ALargeUploadStreamsThroughWhileHealthIsAnswered) {
  LeaseRef lease = StartedLease();
  // 12 MiB: many times the connection's hand-over buffer, so the upload is
  // paused and resumed while the handler writes it to the store.
  std::string bytes(12u << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  std::atomic<int> status{0};
  std::thread upload([&] {
    ApiClient c(process_->port(), process_->token("w1"));
    status = c.Put("/v1/api/steps/" + lease.lease_id + "/artifacts/field.bin?worker_id=worker-1&attempt=1", bytes,
                   Sha256(bytes))
                 .status;
  });
  EXPECT_EQ(RawStatus(process_->port(), HealthRequest()), 200);
  upload.join();
  ASSERT_EQ(status.load(), 201);
  Reply got = exec_->Get("/v1/api/artifacts/" + Sha256(bytes));
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body.size(), bytes.size());
  EXPECT_TRUE(got.body == bytes);
}

std::string KeyedHealthRequest(const std::string& token) {
  return "GET /v1/api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n\r\n";
}

class Caps : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.extra_args = {"--max-connections-per-address", "4"};
    return o;
  }
};

// The attack: 1,100 idle connections from one address answered 503 to every
// worker on that host. Past the cap the address's oldest closes instead.
TEST_F(Caps, AnAddressFullOfKeylessConnectionsStillLetsAWorkerIn) {
  std::vector<RawConnection> idle;
  for (int i = 0; i < 4; ++i) idle.emplace_back(process_->port());
  std::string response;
  EXPECT_EQ(RawStatus(process_->port(), KeyedHealthRequest(process_->token("w1")), &response), 200) << response;
  EXPECT_EQ(idle.front().ReadUntilClosed(kAnswerWithinMs), "") << "the oldest keyless connection is closed";
  EXPECT_TRUE(idle.front().closed());
  idle.back().Poll();
  EXPECT_FALSE(idle.back().closed()) << "the newer ones stay";
}

class TotalCap : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.extra_args = {"--max-connections", "16"};
    return o;
  }
};

TEST_F(TotalCap, PastTheCapOfKeyedConnectionsRequestsAre503WithRetryAfter) {
  std::vector<RawConnection> keyed;
  for (int i = 0; i < 16; ++i) {
    keyed.emplace_back(process_->port());
    ASSERT_TRUE(keyed.back().Send(KeyedHealthRequest(process_->token("w1"))));
    ASSERT_EQ(StatusOf(keyed.back().ReadResponse(kAnswerWithinMs)), 200);  // kept alive, counted
  }
  std::string response;
  EXPECT_EQ(RawStatus(process_->port(), KeyedHealthRequest(process_->token("w1")), &response), 503) << response;
  EXPECT_NE(response.find("Retry-After: "), std::string::npos) << response;
  // The keyless budget is another: its connections neither count nor are counted.
  EXPECT_EQ(RawStatus(process_->port(), HealthRequest()), 200);
}

// The attack: 9,000 slow keyless connections over 10 addresses (each under
// the per-address cap) filled the one cap workers shared; heartbeats got 503.
class Flood : public FrontEnd {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o = FrontEnd::ProcessOptions();
    o.extra_args = {"--max-connections", "64", "--max-unauthenticated", "64", "--max-connections-per-address", "16"};
    return o;
  }
};

TEST_F(Flood, KeylessConnectionsFromTenAddressesNeverReachAWorkersHeartbeats) {
  LeaseRef l = StartedLease();
  RawConnection kept(process_->port());  // a worker's kept-alive connection
  ASSERT_TRUE(kept.Send(HeartbeatRequest(process_->token("w1"), l.lease_id, "worker-1")));
  ASSERT_EQ(StatusOf(kept.ReadResponse(kAnswerWithinMs)), 200);
  std::vector<RawConnection> flood;
  int heartbeats = 0;
  for (int i = 0; i < 300; ++i) {
    flood.emplace_back(process_->port(), "127.0.0." + std::to_string(2 + i % 10));
    ASSERT_TRUE(flood.back().ok()) << "cannot connect from 127.0.0." << 2 + i % 10;
    ASSERT_TRUE(flood.back().Send("GET /v1/api/health HTTP/1.1\r\nX-Slow: "));  // never finished
    if (i % 30 != 29) continue;
    // Every 30 keyless connections, a heartbeat on the kept connection and one on a fresh one.
    ++heartbeats;
    ASSERT_TRUE(kept.Send(HeartbeatRequest(process_->token("w1"), l.lease_id, "worker-1")));
    EXPECT_EQ(StatusOf(kept.ReadResponse(kAnswerWithinMs)), 200) << "kept connection, after " << i + 1;
    std::string response;
    EXPECT_EQ(RawStatus(process_->port(), HeartbeatRequest(process_->token("w1"), l.lease_id, "worker-1"), &response),
              200)
        << "fresh connection, after " << i + 1 << ": " << response;
  }
  EXPECT_EQ(heartbeats, 10);
  int open = 0;
  for (RawConnection& c : flood) {
    c.Poll();
    open += c.closed() ? 0 : 1;
  }
  EXPECT_LE(open, 64) << "keyless connections held past their cap";
}

class Deadlines : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.extra_args = {"--head-timeout-ms", "1000", "--body-min-rate", "1000"};
    return o;
  }

  // Sends `step` every 200 ms until the server closes the connection or
  // `rounds` pass; whether it was closed.
  static bool TrickleUntilClosed(RawConnection& c, const std::string& step, int rounds) {
    for (int i = 0; i < rounds; ++i) {
      if (!c.Send(step)) return true;
      c.Poll();
      if (c.closed()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
};

TEST_F(Deadlines, AHeadStillTricklingAtTheDeadlineIsClosed) {
  RawConnection slow(process_->port());
  ASSERT_TRUE(slow.Send("GET /v1/api/health HTTP/1.1\r\nX-Slow: "));
  // 1 s deadline; 15 s of trickling is far past it.
  EXPECT_TRUE(TrickleUntilClosed(slow, "a", 75));
  EXPECT_EQ(RawStatus(process_->port(), HealthRequest()), 200);
}

TEST_F(Deadlines, ABodySlowerThanTheMinimumRateIsClosed) {
  RawConnection slow(process_->port());
  ASSERT_TRUE(slow.Send("POST /v1/api/steps/claim HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                        process_->token("w1") + "\r\nContent-Length: 100000\r\n\r\n{"));
  // 50 bytes/s against a minimum of 1000.
  EXPECT_TRUE(TrickleUntilClosed(slow, "          ", 75));
  EXPECT_EQ(RawStatus(process_->port(), HealthRequest()), 200);
}

}  // namespace
}  // namespace scimesh::coordinator::testing
