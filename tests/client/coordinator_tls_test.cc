// The real coordinator serving HTTPS (--tls-cert, --tls-key): a worker that
// trusts its certificate carries a run with an artifact through it (upload
// and download over TLS); an untrusted certificate and plain http are refused;
// only TLS 1.2+ with forward-secret key exchange is negotiated.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "protocol/client/client.h"
#include "protocol/runtime/worker.h"
#include "tests/client/real_coordinator.h"
#include "tests/client/self_signed_cert.h"

namespace scimesh {
namespace {

using testing::RealCoordinator;

class CoordinatorTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "scimesh-coordinator-tls-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    ASSERT_TRUE(testing::WriteSelfSigned(dir_ + "/cert.pem", dir_ + "/key.pem"));
    std::filesystem::permissions(dir_ + "/key.pem", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    auto c = RealCoordinator::Start({"--tls-cert", dir_ + "/cert.pem", "--tls-key", dir_ + "/key.pem",
                                     "--lease-ttl-ms", "2000", "--heartbeat-ms", "200"});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    coord_ = std::move(*c);
  }
  void TearDown() override {
    if (HasFailure() && coord_) std::cerr << "coordinator log:\n" << coord_->Log() << "\n";
    coord_.reset();
    std::filesystem::remove_all(dir_);
  }

  ClientOptions Options(bool trusted) const {
    ClientOptions o;
    o.coordinator_url = coord_->url();
    o.token = Token(coord_->token());
    o.retry_budget = Millis(2000);
    if (trusted) o.ca_file = dir_ + "/cert.pem";
    return o;
  }

  std::string dir_;
  std::unique_ptr<RealCoordinator> coord_;
};

TEST_F(CoordinatorTlsTest, AWorkerTrustingTheCertificateCarriesARunWithAnArtifact) {
  ASSERT_EQ(coord_->url().rfind("https://", 0), 0u);
  WorkerOptions w;
  w.client = Options(true);
  w.worker_id = "tls/1";
  w.spool_dir = dir_;
  w.wait_ms = 500;
  std::atomic<int> completed{0};
  w.on_lease_finished = [&](const LeaseReport& r) { completed += r.end == LeaseEnd::kCompleted; };
  Worker worker(std::move(w));
  StepDefinition produce{"produce", {}, std::nullopt, {}, {}, {}, {}, {}};
  StepDefinition consume{"consume", {"produce"}, std::nullopt, {}, {}, {}, {}, {}};
  std::string consumed;
  ASSERT_TRUE(worker
                  .Register(WorkflowDefinition{"tls", "1", {produce, consume}},
                            {{"produce", [](StepContext& ctx) {
                                (void)ctx.WriteArtifact("field.txt", "over tls\n", "text/plain");
                                return StepResult::Output("{}");
                              }},
                             {"consume", [&](StepContext& ctx) {
                                auto path = ctx.InputArtifactPath("produce", "field.txt");
                                if (!path.ok()) return StepResult::Fatal(path.status().message());
                                std::ifstream in(*path);
                                std::getline(in, consumed);
                                return StepResult::Output("{}");
                              }}})
                  .ok());
  std::thread serving([&] { (void)worker.Serve(); });
  auto client = Client::Create(Options(true)).value();
  std::string run;
  for (int i = 0; i < 100 && run.empty(); ++i) {
    auto r = client->StartRun(RunCreateRequest{"tls", std::nullopt, "{}", std::nullopt, std::nullopt});
    if (r.ok()) run = r->run_id;
    else std::this_thread::sleep_for(Millis(50));  // not registered yet
  }
  ASSERT_FALSE(run.empty());
  for (int i = 0; i < 300 && completed.load() < 2; ++i) std::this_thread::sleep_for(Millis(50));
  worker.Stop();
  serving.join();
  EXPECT_EQ(completed.load(), 2);
  EXPECT_EQ(consumed, "over tls");
  auto view = client->ShowRun(run);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->status, "completed");
}

TEST_F(CoordinatorTlsTest, AnUntrustedCertificateIsRefused) {
  auto client = Client::Create(Options(false)).value();
  auto r = client->Register(RegisterRequest{"tls/2", "h", "v", 1, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kPermissionDenied) << r.status().ToString();
}

TEST_F(CoordinatorTlsTest, PlainHttpToTheTlsPortGetsNoAnswer) {
  ClientOptions o = Options(true);
  o.coordinator_url = "http://" + coord_->url().substr(std::string("https://").size());
  auto client = Client::Create(o).value();
  auto r = client->Register(RegisterRequest{"tls/3", "h", "v", 1, {}});
  EXPECT_FALSE(r.ok());
}

// Whether an OpenSSL client limited to `version` and `ciphers` (TLS 1.2 and
// below) completes a handshake with 127.0.0.1:port.
bool Handshakes(int port, int version, const char* ciphers) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_security_level(ctx, 0);  // let this client offer what the attack needs
  SSL_CTX_set_min_proto_version(ctx, version);
  SSL_CTX_set_max_proto_version(ctx, version);
  if (ciphers != nullptr) SSL_CTX_set_cipher_list(ctx, ciphers);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    ok = SSL_connect(ssl) == 1;
    SSL_free(ssl);
  }
  ::close(fd);
  SSL_CTX_free(ctx);
  return ok;
}

// Attack: a client (or a man in the middle downgrading one) asks for TLS 1.0
// or 1.1, or for a suite without forward secrecy (static RSA key exchange,
// offered only with an RSA certificate). None is negotiated.
TEST(CoordinatorTls, OnlyTls12AndUpWithForwardSecrecyIsNegotiated) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "scimesh-coordinator-tls-XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  ASSERT_TRUE(testing::WriteSelfSigned(dir + "/cert.pem", dir + "/key.pem", /*rsa=*/true));
  std::filesystem::permissions(dir + "/key.pem", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto c = RealCoordinator::Start({"--tls-cert", dir + "/cert.pem", "--tls-key", dir + "/key.pem"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const std::string& url = (*c)->url();
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  EXPECT_FALSE(Handshakes(port, TLS1_VERSION, nullptr)) << "TLS 1.0 negotiated";
  EXPECT_FALSE(Handshakes(port, TLS1_1_VERSION, nullptr)) << "TLS 1.1 negotiated";
  EXPECT_FALSE(Handshakes(port, TLS1_2_VERSION, "AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA"))
      << "a static-RSA suite negotiated";
  EXPECT_TRUE(Handshakes(port, TLS1_2_VERSION, "ECDHE-RSA-AES128-GCM-SHA256"));
  EXPECT_TRUE(Handshakes(port, TLS1_3_VERSION, nullptr));
  c->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace scimesh
