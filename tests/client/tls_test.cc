// TLS: verified by default (a self-signed coordinator is refused), trusted
// with its CA file, accepted unverified only when asked (--insecure).
#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "protocol/client.h"
#include "tests/lib/time_scale.h"

namespace scimesh {
namespace {

using testing::Scaled;

// Writes a self-signed certificate for 127.0.0.1 and its key (PEM).
bool WriteSelfSigned(const std::string& cert_path, const std::string& key_path) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  if (key == nullptr || x == nullptr) return false;
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (const auto& [nid, value] : {std::pair<int, const char*>{NID_subject_alt_name, "IP:127.0.0.1"},
                                   {NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (ext == nullptr) return false;
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(x, key, EVP_sha256()) == 0) return false;
  FILE* c = std::fopen(cert_path.c_str(), "w");
  FILE* k = std::fopen(key_path.c_str(), "w");
  const bool ok = c != nullptr && k != nullptr && PEM_write_X509(c, x) == 1 &&
                  PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  if (c != nullptr) std::fclose(c);
  if (k != nullptr) std::fclose(k);
  X509_free(x);
  EVP_PKEY_free(key);
  return ok;
}

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
