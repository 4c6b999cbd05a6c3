// TLS: verified by default (a self-signed coordinator is refused), trusted
// with its CA file, accepted unverified only when asked (--insecure).
#include <httplib.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "protocol/client/client.h"
#include "tests/client/self_signed_cert.h"
#include "tests/lib/time_scale.h"

namespace scimesh {
namespace {

using testing::Scaled;
using testing::WriteSelfSigned;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "scimesh-tls-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    ASSERT_TRUE(WriteSelfSigned(dir_ + "/cert.pem", dir_ + "/key.pem"));
    server_ = std::make_unique<httplib::SSLServer>((dir_ + "/cert.pem").c_str(), (dir_ + "/key.pem").c_str());
    ASSERT_TRUE(server_->is_valid());
    server_->Post("/v1/api/workers/register", [this](const httplib::Request&, httplib::Response& res) {
      ++served_;
      res.set_content(R"({"worker_id":"w/1","lease_ttl_ms":30000,"heartbeat_ms":10000})", "application/json");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    // bind_to_any_port also listens: connections queue until the loop runs.
    thread_ = std::thread([this] { server_->listen_after_bind(); });
  }
  void TearDown() override {
    // stop() is a no-op until the accept loop runs: let it start first.
    for (int i = 0; i < 5000 && !server_->is_running(); ++i) std::this_thread::sleep_for(Millis(1));
    server_->stop();
    if (thread_.joinable()) thread_.join();
    std::filesystem::remove_all(dir_);
  }

  Result<RegisterResponse> RegisterWith(ClientOptions o) {
    o.coordinator_url = "https://127.0.0.1:" + std::to_string(port_);
    o.token = Token("tok-tls");
    o.retry_budget = Scaled(Millis(1000));
    // The handshake counts in the connect timeout: slow builds need more.
    o.connect_timeout = Scaled(o.connect_timeout);
    auto c = Client::Create(o);
    if (!c.ok()) return c.status();
    return (*c)->Register(RegisterRequest{"w/1", "h", "v", 1, {}});
  }

  std::string dir_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> served_{0};
};

TEST_F(TlsTest, AnUntrustedCertificateIsRefusedAndNotRetried) {
  auto r = RegisterWith(ClientOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kPermissionDenied) << r.status().ToString();
  EXPECT_EQ(served_.load(), 0);
}

TEST_F(TlsTest, ATrustedCaFileIsVerifiedAndAccepted) {
  ClientOptions o;
  o.ca_file = dir_ + "/cert.pem";
  auto r = RegisterWith(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(served_.load(), 1);
}

TEST_F(TlsTest, InsecureTlsSkipsVerificationOnlyWhenAsked) {
  ClientOptions o;
  o.insecure_tls = true;
  auto r = RegisterWith(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

}  // namespace
}  // namespace scimesh
