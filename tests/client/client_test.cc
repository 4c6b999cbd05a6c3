// Client against the hostile server: retries, 409 reasons, timeouts, resets,
// malformed and oversized answers, redirects and where the token goes.
#include "protocol/client/client.h"
#include "protocol/client/coordinator_call.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "protocol/util/sha256.h"
#include "protocol/wire/wire_json.h"
#include "tests/client/hostile_server.h"
#include "tests/lib/time_scale.h"

namespace scimesh {
namespace {

using testing::Call;
using testing::HostileServer;
using testing::RecordedRequest;
using testing::Reply;
using testing::Scaled;

const char* const kToken = "tok-client-test-5f0e9c";

ClientOptions Options(const std::string& url) {
  ClientOptions o;
  o.coordinator_url = url;
  o.token = Token(kToken);
  o.backoff = BackoffPolicy{Millis(20), 2.0, 0.5, Millis(200)};
  o.retry_budget = Millis(3000);
  o.call_timeout = Millis(2000);
  return o;
}

std::unique_ptr<Client> MakeClient(const ClientOptions& o) {
  auto c = Client::Create(o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(*c);
}

LeaseCall Lease1() { return LeaseCall{"l_00000000000000c1", 1, "w/1", std::nullopt}; }

std::string ErrorJson(const std::string& reason, const std::string& outcome = "") {
  ErrorBody e;
  e.error = "conflict";
  e.reason = reason;
  if (!outcome.empty()) e.outcome = outcome;
  e.message = "refused";
  return SerializeErrorBody(e);
}

const std::string kExtend = R"({"lease_expires_at":"2026-11-29T08:00:41.300Z","lease_ttl_ms":30000})";

// A memfd holding `bytes`, as an upload source or download target.
int MemFile(const std::string& bytes) {
  int fd = ::memfd_create("t", MFD_CLOEXEC);
  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  return fd;
}

std::string ReadFd(int fd) {
  std::string out(1 << 16, '\0');
  ssize_t n = ::pread(fd, out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

TEST(ClientRetries, AFailureAgainWithAnotherElapsedTimeIsTheSameFailure) {
  // libcurl writes how long the connect took: one outage, one warning.
  const Status a = Status::Unavailable("claim: Failed to connect to 127.0.0.1 port 1 after 9 ms: refused");
  const Status b = Status::Unavailable("claim: Failed to connect to 127.0.0.1 port 1 after 0 ms: refused");
  EXPECT_TRUE(SameFailure(a, b));
  EXPECT_FALSE(SameFailure(a, Status::Unavailable("claim: Failed to connect to 127.0.0.1 port 2 after 9 ms: refused")));
  EXPECT_FALSE(SameFailure(a, Status::Timeout(std::string(a.message()))));
  // Only "after N ms" is elapsed time: other numbers still tell failures apart.
  EXPECT_FALSE(SameFailure(Status::Unavailable("answered 503 after 2 tries"),
                           Status::Unavailable("answered 503 after 3 tries")));
}

TEST(ClientHostile, CompleteAppliedThenResponseDroppedEndsAsAlreadyApplied) {
  std::atomic<int> completes{0};
  auto server = HostileServer::Start([&](const RecordedRequest& r) {
    if (r.path.find("/complete") == std::string::npos) return Reply::Json(404, "{}");
    // First copy: "applied", then the connection dies before the answer.
    if (completes++ == 0) return Reply::Drop();
    return Reply::Json(409, ErrorJson("already_applied", "completed"));
  });
  auto client = MakeClient(Options(server->url()));
  auto r = client->Complete(Lease1(), CompleteRequest{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->settled());
  EXPECT_TRUE(r->refused_with(RefusalReason::kAlreadyApplied));
  EXPECT_EQ(r->refusal->outcome, "completed");
  EXPECT_EQ(server->Count(Call("POST", "/complete")), 2u);
  // Both copies carried the same (lease, attempt, worker_id): the retry is a replay.
  auto reqs = server->requests();
  EXPECT_EQ(reqs[0].body, reqs[1].body);
}

TEST(ClientHostile, EachRefusalReasonComesBackByNameAndIsNotRetried) {
  for (const auto& name_reason : std::vector<std::pair<std::string, RefusalReason>>{
           {"already_applied", RefusalReason::kAlreadyApplied},
           {"fenced", RefusalReason::kFenced},
           {"run_terminal", RefusalReason::kRunTerminal},
           {"not_started", RefusalReason::kNotStarted}}) {
    // Not a structured binding: the handler lambda captures `name` (C++20 allows
    // that, clang before 16 does not).
    const std::string& name = name_reason.first;
    const RefusalReason reason = name_reason.second;
    auto server = HostileServer::Start([&](const RecordedRequest&) { return Reply::Json(409, ErrorJson(name)); });
    auto client = MakeClient(Options(server->url()));
    auto hb = client->Heartbeat(Lease1());
    ASSERT_TRUE(hb.ok()) << name << ": " << hb.status().ToString();
    ASSERT_TRUE(hb->refusal.has_value()) << name;
    EXPECT_EQ(hb->refusal->reason, reason) << name;
    EXPECT_FALSE(hb->applied.has_value());
    auto fail = client->Fail(Lease1(), FailClass::kRetryable, "x");
    ASSERT_TRUE(fail.ok());
    EXPECT_EQ(fail->refusal->reason, reason);
    EXPECT_EQ(fail->settled(), reason == RefusalReason::kAlreadyApplied) << name;
    EXPECT_EQ(server->requests().size(), 2u) << name << ": a 409 must never be retried";
  }
}

TEST(ClientHostile, ADemandReplyItCannotTrustIsAnErrorAndNotRetried) {
  const std::string group =
      R"({"workflow":"wf","version":"1","step_id":"s","resources":{"nodes":1,"ranks_per_node":1,)"
      R"("cpus_per_rank":1,"gpus_per_rank":0},"walltime_s":60,"runnable":RUNNABLE,"backing_off":0,"waiting":0,)"
      R"("running":0,"live_workers":0,"claimable_by_live_workers":null,"unfittable":null})";
  auto with = [&](const std::string& runnable) {
    std::string g = group;
    g.replace(g.find("RUNNABLE"), 8, runnable);
    return R"({"groups":[)" + g + R"(],"more":false,"at":"2026-11-29T08:00:30.000Z"})";
  };
  for (const std::string& body : {std::string(R"({"groups":[)"), with("-1"), with("\"3\"")}) {
    auto server = HostileServer::Start([&](const RecordedRequest&) { return Reply::Json(200, body); });
    auto r = MakeClient(Options(server->url()))->Demand(DemandQuery{});
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
    EXPECT_EQ(server->requests().size(), 1u) << body;
  }
  auto server = HostileServer::Start([&](const RecordedRequest&) { return Reply::Json(200, with("3")); });
  auto r = MakeClient(Options(server->url()))->Demand(DemandQuery{{"a", "b"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->groups.size(), 1u);
  EXPECT_EQ(r->groups[0].runnable, 3);
  ASSERT_EQ(server->requests().size(), 1u);
  EXPECT_EQ(server->requests()[0].target, "/v1/api/demand?workflow=a&workflow=b");
  EXPECT_FALSE(MakeClient(Options(server->url()))->Demand(DemandQuery{std::vector<std::string>(65, "w")}).ok());
}

TEST(ClientHostile, A409WithoutAKnownReasonIsAnError) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(409, ErrorJson("stale")); });
  auto client = MakeClient(Options(server->url()));
  auto r = client->Complete(Lease1(), CompleteRequest{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST(ClientHostile, FourHundredsAreNeverRetried) {
  struct Case {
    int status;
    Code code;
  };
  for (const Case c : {Case{400, Code::kInvalidArgument}, Case{401, Code::kPermissionDenied},
                       Case{403, Code::kPermissionDenied}, Case{404, Code::kNotFound},
                       Case{413, Code::kInvalidArgument}}) {
    auto server = HostileServer::Start([&](const RecordedRequest&) {
      return Reply::Json(c.status, R"({"error":"bad_request","field":"max","message":"must be 1-64"})");
    });
    auto client = MakeClient(Options(server->url()));
    auto r = client->Claim(ClaimRequest{"w/1", 1, 0, std::nullopt, std::nullopt});
    ASSERT_FALSE(r.ok()) << c.status;
    EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
    EXPECT_NE(r.status().message().find("'max'"), std::string::npos) << r.status().ToString();
    EXPECT_EQ(server->requests().size(), 1u) << c.status;
  }
}

TEST(ClientHostile, ServerErrorsAreRetriedUntilTheyStop) {
  std::atomic<int> n{0};
  auto server = HostileServer::Start([&](const RecordedRequest&) {
    const int i = n++;
    if (i == 0) return Reply::Json(500, R"({"error":"internal","message":"boom"})");
    if (i == 1) return Reply::Json(502, "<html>" + std::string(2 << 20, 'x') + "</html>");  // big, still a 5xx
    return Reply::Json(200, kExtend);
  });
  ClientOptions o = Options(server->url());
  o.max_response_bytes = 1 << 20;  // the 502 page is bigger: cut, not refused
  auto client = MakeClient(o);
  auto r = client->Started(Lease1());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->applied.has_value());
  EXPECT_EQ(r->applied->response.lease_ttl_ms, 30000);
  EXPECT_EQ(server->requests().size(), 3u);
}

TEST(ClientHostile, RetryAfterIsHonouredOn429And503) {
  for (int status : {429, 503}) {
    std::atomic<int> n{0};
    auto server = HostileServer::Start([&](const RecordedRequest&) {
      if (n++ == 0) return Reply::Json(status, R"({"error":"unavailable","message":"busy"})", {{"Retry-After", "1"}});
      return Reply::Json(200, R"({"worker_id":"w/1","lease_ttl_ms":30000,"heartbeat_ms":10000})");
    });
    auto client = MakeClient(Options(server->url()));  // backoff alone would wait <= 200 ms
    auto r = client->Register(RegisterRequest{"w/1", "h", "v", 1, {}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto reqs = server->requests();
    ASSERT_EQ(reqs.size(), 2u);
    // A lower bound only: the client must not come back before it was told to.
    EXPECT_GE(reqs[1].at - reqs[0].at, std::chrono::milliseconds(1000)) << status;
  }
}

// A loopback port nothing listens on (bound, then closed).
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(ClientHostile, PersistentServerErrorsGiveUpAtTheBudgetAsUnavailable) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(503, R"({"error":"unavailable","message":"x"})"); });
  ClientOptions o = Options(server->url());
  o.retry_budget = Millis(400);
  auto client = MakeClient(o);
  auto r = client->Register(RegisterRequest{"w/1", "h", "v", 1, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_GE(server->requests().size(), 2u);
  // The call is named once, with what the server said and how often it was asked.
  const std::string m = r.status().message();
  EXPECT_EQ(m.rfind("register answered 503 unavailable: x (gave up after ", 0), 0u) << m;
  EXPECT_EQ(Count(m, "register"), 1u) << m;
}

TEST(ClientMessages, AnUnreachableCoordinatorIsNamedWithCurlsReasonOnce) {
  const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort());
  ClientOptions o = Options(url);
  o.retry_budget = Millis(100);
  auto client = MakeClient(o);
  auto r = client->Register(RegisterRequest{"w/1", "h", "v", 1, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  const std::string m = r.status().message();
  EXPECT_EQ(m.rfind("register: cannot reach the coordinator at " + url + ": ", 0), 0u) << m;
  EXPECT_NE(m.find("Couldn't connect to server"), std::string::npos) << m;  // libcurl's reason
  EXPECT_EQ(Count(m, "register"), 1u) << m;
  EXPECT_NE(m.find("(gave up after "), std::string::npos) << m;
}

// Answers every connection on a loopback port with a plain-HTTP 400 as soon
// as any bytes arrive (a TLS ClientHello included), as an http server does.
class PlainHttpPort {
 public:
  PlainHttpPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len), 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // shutdown() below
        char buf[512];
        if (::read(c, buf, sizeof buf) > 0) {
          const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
          (void)!::write(c, reply, sizeof reply - 1);
        }
        ::close(c);
      }
    });
  }
  ~PlainHttpPort() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(ClientMessages, HttpsToAPlainHttpPortSaysSoWithTheTlsReason) {
  PlainHttpPort plain;
  const std::string url = "https://127.0.0.1:" + std::to_string(plain.port());
  ClientOptions o = Options(url);
  o.retry_budget = Millis(100);
  // TLS set-up (the CA bundle) is slow under ASan: the handshake must not
  // run out of time before the server's plain-text answer arrives.
  o.call_timeout = Scaled(Millis(2000));
  auto client = MakeClient(o);
  auto r = client->Register(RegisterRequest{"w/1", "h", "v", 1, {}});
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_EQ(m.rfind("register: cannot reach the coordinator at " + url + ": ", 0), 0u) << m;
  EXPECT_NE(m.find("SSL"), std::string::npos) << m;  // libcurl's TLS reason, not just "Connection"
}

TEST(ClientHostile, StallPastTheTimeoutIsRetriedThenTimesOut) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Stall(Scaled(Millis(5000))); });
  ClientOptions o = Options(server->url());
  o.call_timeout = Scaled(Millis(150));
  o.retry_budget = Scaled(Millis(700));
  auto client = MakeClient(o);
  auto r = client->Register(RegisterRequest{"w/1", "h", "v", 1, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kTimeout) << r.status().ToString();
  EXPECT_GE(server->requests().size(), 2u);
}

TEST(ClientHostile, ClaimMayTakeWaitMsPlusMarginButOtherCallsMayNot) {
  auto server = HostileServer::Start([](const RecordedRequest& r) {
    // Answer after 500 ms: longer than call_timeout, shorter than wait_ms + margin.
    std::this_thread::sleep_for(Scaled(Millis(500)));
    if (r.path.find("claim") != std::string::npos) return Reply::Json(200, R"({"leases":[]})");
    return Reply::Json(200, R"({"worker_id":"w/1","lease_ttl_ms":1,"heartbeat_ms":1})");
  });
  ClientOptions o = Options(server->url());
  o.call_timeout = Scaled(Millis(200));
  o.claim_margin = Scaled(Millis(200));
  o.retry_budget = Scaled(Millis(300));
  auto client = MakeClient(o);
  const int64_t wait_ms = Scaled(Millis(600)).count();
  auto claim = client->Claim(ClaimRequest{"w/1", 1, wait_ms, std::nullopt, std::nullopt});
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_TRUE(claim->response.leases.empty());
  EXPECT_EQ(server->Count(Call("POST", "/claim")), 1u);
  auto reg = client->Register(RegisterRequest{"w/1", "h", "v", 1, {}});
  EXPECT_EQ(reg.status().code(), Code::kTimeout) << reg.status().ToString();
}

TEST(ClientHostile, ConnectionResetIsRetried) {
  std::atomic<int> n{0};
  auto server = HostileServer::Start([&](const RecordedRequest&) {
    if (n++ == 0) return Reply::Reset();
    return Reply::Json(200, kExtend);
  });
  auto client = MakeClient(Options(server->url()));
  auto r = client->Heartbeat(Lease1(), std::string(R"({"iteration":3})"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->applied.has_value());
  auto reqs = server->requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_NE(reqs[1].body.find(R"("progress":{"iteration":3})"), std::string::npos) << reqs[1].body;
}

TEST(ClientHostile, MalformedJsonIsAnErrorAndNotRetried) {
  for (const std::string& body : {std::string(R"({"leases": [)"), std::string(R"({"leases": 5})"),
                                 std::string(100000, '['), std::string("")}) {
    auto server = HostileServer::Start([&](const RecordedRequest&) { return Reply::Json(200, body); });
    auto client = MakeClient(Options(server->url()));
    auto r = client->Claim(ClaimRequest{"w/1", 1, 0, std::nullopt, std::nullopt});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
    EXPECT_EQ(server->requests().size(), 1u);
  }
}

TEST(ClientHostile, OversizedJsonIsRefusedWithoutBufferingIt) {
  const std::string huge = R"({"leases":[],"pad":")" + std::string(3 << 20, 'x') + "\"}";
  auto server = HostileServer::Start([&](const RecordedRequest&) { return Reply::Json(200, huge); });
  ClientOptions o = Options(server->url());
  o.max_response_bytes = 1 << 20;
  auto client = MakeClient(o);
  auto r = client->Claim(ClaimRequest{"w/1", 1, 0, std::nullopt, std::nullopt});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("larger than"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(server->requests().size(), 1u);
}

TEST(ClientHostile, CoordinatorCallsNeverFollowRedirects) {
  auto elsewhere = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, R"({"leases":[]})"); },
                                        "127.0.0.2");
  auto server = HostileServer::Start(
      [&](const RecordedRequest&) { return Reply::Redirect(307, elsewhere->url() + "/v1/api/steps/claim"); });
  auto client = MakeClient(Options(server->url()));
  auto r = client->Claim(ClaimRequest{"w/1", 1, 0, std::nullopt, std::nullopt});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(elsewhere->requests().size(), 0u);
}

TEST(ClientHostile, InterruptEndsALongPollPromptly) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Stall(Millis(20000)); });
  auto client = MakeClient(Options(server->url()));
  std::thread stopper([&] {
    server->WaitFor(Call("POST", "/claim"), Millis(5000));
    client->Interrupt();
  });
  auto r = client->Claim(ClaimRequest{"w/1", 1, 20000, std::nullopt, std::nullopt});
  stopper.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCancelled) << r.status().ToString();
}

TEST(ClientHostile, OneClientReusesOneConnection) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, kExtend); });
  auto client = MakeClient(Options(server->url()));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->Heartbeat(Lease1()).ok());
  auto reqs = server->requests();
  ASSERT_EQ(reqs.size(), 5u);
  for (const auto& r : reqs) EXPECT_EQ(r.connection, reqs[0].connection);
  // A second client is a second connection (one per thread).
  auto other = MakeClient(Options(server->url()));
  ASSERT_TRUE(other->Heartbeat(Lease1()).ok());
  EXPECT_NE(server->requests().back().connection, reqs[0].connection);
}

// The kept-alive connection a program started meanwhile could inherit.
TEST(ClientHostile, TheKeptConnectionIsCloseOnExec) {
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, kExtend); });
  auto client = MakeClient(Options(server->url()));
  ASSERT_TRUE(client->Heartbeat(Lease1()).ok());
  const std::string port = server->url().substr(server->url().rfind(':') + 1);
  int connections = 0;
  for (int fd = 3; fd < 1024; ++fd) {
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0 || peer.sin_family != AF_INET) continue;
    if (std::to_string(ntohs(peer.sin_port)) != port) continue;
    ++connections;
    EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << "the client's connection (fd " << fd << ") is inherited by exec";
  }
  EXPECT_EQ(connections, 1) << "the client's connection was not found";
}

TEST(ClientHostile, PlainHttpToAnotherHostIsRefusedUnlessAllowed) {
  ClientOptions o = Options("http://coordinator.example:8470");
  auto refused = Client::Create(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied);
  o.allow_insecure_http = true;
  EXPECT_TRUE(Client::Create(o).ok());
  EXPECT_TRUE(Client::Create(Options("https://coordinator.example:8470")).ok());
  EXPECT_FALSE(Client::Create(Options("ftp://127.0.0.1/")).ok());
  EXPECT_FALSE(Client::Create(Options("http://user:pw@127.0.0.1:1")).ok());
}

// ---- artifacts ----

struct Blob {
  std::string bytes = "mesh solution bytes\n";
  std::string sha = Sha256Hex(bytes);
};

InputArtifact ArtifactAt(const std::string& uri, const Blob& b) {
  return InputArtifact{"solve-16", "solution.vti", uri, b.sha, static_cast<int64_t>(b.bytes.size()), "text/plain"};
}

TEST(ClientArtifacts, RedirectToAnotherHostDoesNotCarryTheToken) {
  Blob blob;
  auto storage = HostileServer::Start([&](const RecordedRequest&) { return Reply::Bytes(200, blob.bytes, "text/plain"); },
                                      "127.0.0.2");
  auto coord = HostileServer::Start(
      [&](const RecordedRequest&) { return Reply::Redirect(302, storage->url() + "/blob/" + blob.sha); });
  auto client = MakeClient(Options(coord->url()));
  int fd = MemFile("");
  auto r = client->DownloadArtifact(ArtifactAt(coord->url() + "/v1/api/artifacts/" + blob.sha, blob), fd);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadFd(fd), blob.bytes);
  ::close(fd);
  ASSERT_EQ(coord->requests().size(), 1u);
  EXPECT_EQ(coord->requests()[0].Header("authorization"), std::string("Bearer ") + kToken);
  ASSERT_EQ(storage->requests().size(), 1u);
  EXPECT_FALSE(storage->requests()[0].HasHeader("authorization"));
}

TEST(ClientArtifacts, RedirectToAnotherPortDoesNotCarryTheToken) {
  Blob blob;
  auto other_port = HostileServer::Start([&](const RecordedRequest&) { return Reply::Bytes(200, blob.bytes, "text/plain"); });
  auto coord = HostileServer::Start([&](const RecordedRequest&) { return Reply::Redirect(307, other_port->url() + "/b"); });
  ASSERT_NE(coord->port(), other_port->port());
  auto client = MakeClient(Options(coord->url()));
  int fd = MemFile("");
  auto r = client->DownloadArtifact(ArtifactAt(coord->url() + "/v1/api/artifacts/" + blob.sha, blob), fd);
  ::close(fd);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(other_port->requests().size(), 1u);
  EXPECT_FALSE(other_port->requests()[0].HasHeader("authorization"));
}

TEST(ClientArtifacts, SameOriginRedirectKeepsTheTokenAndHopsAreCapped) {
  Blob blob;
  std::atomic<int> hops{0};
  auto coord = HostileServer::Start([&](const RecordedRequest& r) {
    if (r.path == "/final") return Reply::Bytes(200, blob.bytes, "text/plain");
    if (r.path == "/loop") {
      ++hops;
      return Reply::Redirect(302, "/loop");
    }
    return Reply::Redirect(301, "/final");  // relative Location
  });
  auto client = MakeClient(Options(coord->url()));
  int fd = MemFile("");
  auto r = client->DownloadArtifact(ArtifactAt(coord->url() + "/v1/api/artifacts/x", blob), fd);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& req : coord->requests()) {
    EXPECT_EQ(req.Header("authorization"), std::string("Bearer ") + kToken) << req.path;
  }
  auto loop = client->DownloadArtifact(ArtifactAt(coord->url() + "/loop", blob), fd);
  ::close(fd);
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("redirects"), std::string::npos) << loop.status().ToString();
  EXPECT_EQ(hops.load(), 6);  // the first request plus max_redirects (5) hops, not retried
}

TEST(ClientArtifacts, ChecksumOrSizeMismatchIsDataLoss) {
  Blob blob;
  std::string served = blob.bytes;
  auto coord = HostileServer::Start([&](const RecordedRequest&) { return Reply::Bytes(200, served, "text/plain"); });
  auto client = MakeClient(Options(coord->url()));
  int fd = MemFile("");
  served[0] ^= 1;  // same size, other bytes
  auto bad_sha = client->DownloadArtifact(ArtifactAt(coord->url() + "/a", blob), fd);
  ASSERT_FALSE(bad_sha.ok());
  EXPECT_EQ(bad_sha.status().code(), Code::kDataLoss);
  EXPECT_NE(bad_sha.status().message().find("sha256"), std::string::npos);
  served = blob.bytes + std::string(1 << 20, 'x');  // more than promised: aborted early
  auto too_big = client->DownloadArtifact(ArtifactAt(coord->url() + "/a", blob), fd);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), Code::kDataLoss);
  EXPECT_LE(ReadFd(fd).size(), blob.bytes.size());
  ::close(fd);
  EXPECT_EQ(coord->requests().size(), 2u);  // a mismatch is not retried
}

TEST(ClientArtifacts, StalledTransferIsAbortedByTheLowSpeedLimit) {
  Blob blob;
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(blob.bytes.size()) + "\r\n\r\nme";
  auto coord = HostileServer::Start([&](const RecordedRequest&) { return Reply::Raw(head, Millis(10000)); });
  ClientOptions o = Options(coord->url());
  o.low_speed_time = std::chrono::seconds(1);
  o.retry_budget = Millis(500);
  auto client = MakeClient(o);
  int fd = MemFile("");
  auto r = client->DownloadArtifact(ArtifactAt(coord->url() + "/a", blob), fd);
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kTimeout) << r.status().ToString();
}

TEST(ClientArtifacts, UploadDeclaresSha256AndChecksTheReturnedRecord) {
  const std::string bytes = "0.0031 0.0008\n";
  const std::string sha = Sha256Hex(bytes);
  std::string returned_sha = sha;
  auto coord = HostileServer::Start([&](const RecordedRequest& r) {
    ArtifactRef a{"convergence.txt", "http://127.0.0.1/v1/api/artifacts/" + returned_sha, returned_sha,
                  static_cast<int64_t>(r.body.size()), r.Header("content-type")};
    return Reply::Json(201, SerializeArtifactRef(a));
  });
  auto client = MakeClient(Options(coord->url()));
  int fd = MemFile(bytes);
  auto ok = client->UploadArtifact(Lease1(), "convergence.txt", fd, "text/plain");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_TRUE(ok->applied.has_value());
  EXPECT_EQ(ok->applied->sha256, sha);
  auto req = coord->requests().at(0);
  EXPECT_EQ(req.method, "PUT");
  EXPECT_EQ(req.path, "/v1/api/steps/l_00000000000000c1/artifacts/convergence.txt");
  EXPECT_EQ(req.query, "worker_id=w%2F1&attempt=1");
  EXPECT_EQ(req.Header("x-scimesh-sha256"), sha);
  EXPECT_EQ(req.Header("content-type"), "text/plain");
  EXPECT_EQ(req.body, bytes);

  returned_sha = std::string(64, '0');  // the coordinator recorded something else
  auto bad = client->UploadArtifact(Lease1(), "convergence.txt", fd, "text/plain");
  ::close(fd);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kDataLoss);
  EXPECT_FALSE(client->UploadArtifact(Lease1(), "../escape", 0, "text/plain").ok());
}

}  // namespace
}  // namespace scimesh
