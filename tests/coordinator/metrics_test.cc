// Integration: GET /metrics on --metrics-listen — requests by route and
// status, queued steps by workflow, leases held, held claims and their wake,
// expiries, commit latency — and nothing of it on the API's address.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "coordinator_fixture.h"
#include "raw_connection.h"

namespace scimesh::coordinator::testing {
namespace {

// A port free on 127.0.0.1 now (the coordinator binds it just after).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class MetricsTest : public CoordinatorTest {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    metrics_port_ = FreePort();
    CoordinatorProcess::Options o;
    // Long enough that the claim below is held before the leases expire,
    // even on a slow (sanitizer) build.
    o.lease_ttl_ms = 4000;
    o.heartbeat_ms = 1000;
    o.grace_ms = 500;
    o.extra_args = {"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port_)};
    return o;
  }

  std::string Scrape(int port) {
    RawConnection c(port);
    if (!c.ok() || !c.Send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")) return "";
    return c.ReadUntilClosed(10000);
  }

  // The value of the sample `series` (name and labels exactly as exposed),
  // or -1 when absent.
  double Sample(const std::string& series) {
    std::istringstream in(Scrape(metrics_port_));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(series + " ", 0) == 0) return std::atof(line.c_str() + series.size() + 1);
    }
    return -1;
  }

  bool AwaitSample(const std::string& series, double want) {
    return Await([&] { return std::to_string(Sample(series)); }, std::to_string(want), 15000);
  }

  int metrics_port_ = 0;
};

TEST_F(MetricsTest, ReportsQueuesLeasesHeldClaimsExpiriesAndLatencies) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  StartRunOrEmpty("wf");
  StartRunOrEmpty("wf");
  EXPECT_EQ(Sample(R"(scimesh_steps_queued{workflow="wf"})"), 2);
  LeaseRef kept = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(kept.lease_id, "worker-1", 1).status, 200);
  ClaimOne(*w1_, "worker-1");
  EXPECT_EQ(Sample(R"(scimesh_steps_queued{workflow="wf"})"), -1) << "no queued step left in wf";
  EXPECT_EQ(Sample("scimesh_leases_held"), 2);
  EXPECT_EQ(Sample(R"(scimesh_http_requests_total{method="POST",route="/v1/api/steps/claim",status="200"})"), 2);
  EXPECT_EQ(Sample(R"(scimesh_http_requests_total{method="POST",route="/v1/api/steps/:id/started",status="200"})"), 1);
  EXPECT_GT(Sample("scimesh_commit_seconds_count"), 0);

  // A held claim; the expiry of the leases (no heartbeats) requeues their
  // steps and wakes it.
  RawConnection held(process_->port());
  ASSERT_TRUE(held.Send(PostRequest("/v1/api/steps/claim", process_->token("w1"),
                                    R"({"worker_id":"worker-1","max":1,"wait_ms":20000})")));
  EXPECT_TRUE(AwaitSample("scimesh_claims_held", 1));
  std::string answer = held.ReadResponse(15000);
  EXPECT_NE(answer.find(R"("attempt":2)"), std::string::npos) << answer;
  EXPECT_GE(Sample("scimesh_lease_expiries_total"), 1);
  // Recorded by the server around the answer, not before it: awaited.
  EXPECT_TRUE(AwaitSample("scimesh_claim_wake_seconds_count", 1));
  EXPECT_TRUE(AwaitSample("scimesh_claims_held", 0));
}

TEST_F(MetricsTest, TheApiAddressDoesNotServeMetrics) {
  EXPECT_NE(Scrape(metrics_port_).find("# TYPE scimesh_claims_held gauge"), std::string::npos);
  std::string api = Scrape(process_->port());
  EXPECT_EQ(api.rfind("HTTP/1.1 404", 0), 0u) << api;
}

}  // namespace
}  // namespace scimesh::coordinator::testing
