// A client's request path reaches the coordinator's log escaped: control
// characters (decoded %0a, a raw ESC) cannot forge a log line or drive a
// terminal reading the log. What a worker says about itself at register
// (host, version) is refused unless printable.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

class LogEscape : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.extra_args = {"--log-level", "debug"};
    return o;
  }
  void Send(const std::string& request) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(process_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    char buf[4096];
    while (::recv(fd, buf, sizeof buf, 0) > 0) {
    }
    ::close(fd);
  }
};

TEST_F(LogEscape, ARequestPathCannotForgeALogLine) {
  Send("GET /v1/api/runs/x%0a2026-01-01T00:00:00.000%20info%20[coordinator]%20FORGED HTTP/1.1\r\n"
       "Host: x\r\nConnection: close\r\n\r\n");
  Send("GET /v1/api/runs/y\x1b[2J HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string log;
  for (int i = 0; i < 100; ++i) {  // the access log line is written after the answer
    log = process_->log();
    if (log.find("x\\n2026") != std::string::npos && log.find("y\\x1b") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(log.find("\n2026-01-01T00:00:00.000 info [coordinator] FORGED"), std::string::npos) << log;
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << "a raw ESC reached the log";
  EXPECT_NE(log.find("x\\n2026-01-01"), std::string::npos) << log;
}

// Attack: a worker key's holder registers with a host and a version made to
// forge a log line ("worker registered: ... host=" is logged at info).
TEST_F(LogEscape, ARegisteredHostOrVersionCannotForgeALogLine) {
  const std::string forged = "n1\n2026-01-01T00:00:00.000 info [coordinator] FORGED";
  for (const auto& [host, version] : {std::pair<std::string, std::string>{forged, "1.0"}, {"n1", forged},
                                      {"n1\x1b[2J", "1.0"}, {"n1", "1.0\x7f"}}) {
    std::string body = R"({"worker_id":"w-forge","host":)" + Quote(host) + R"(,"version":)" + Quote(version) +
                       R"(,"concurrency":1,"definitions":[]})";
    Reply r = w1_->Post("/v1/api/workers/register", body);
    EXPECT_EQ(r.status, 400) << r.Describe();
    EXPECT_EQ(r.Str("field"), host == "n1" ? "version" : "host") << r.Describe();
  }
  Reply ok = w1_->Post("/v1/api/workers/register",
                       R"j({"worker_id":"w-forge","host":"n1 (rack 4)","version":"scimesh-launch 0.1.0",)j"
                       R"j("concurrency":1,"definitions":[]})j");
  EXPECT_EQ(ok.status, 200) << ok.Describe();
  const std::string log = process_->log();
  EXPECT_EQ(log.find("\n2026-01-01T00:00:00.000 info [coordinator] FORGED"), std::string::npos) << log;
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << "a raw ESC reached the log";
  EXPECT_NE(log.find("host=n1 (rack 4)"), std::string::npos) << log;
}

}  // namespace
}  // namespace scimesh::coordinator::testing
