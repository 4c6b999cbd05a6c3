// The real coordinator serving HTTPS (--tls-cert, --tls-key): a worker that
// trusts its certificate carries a run with an artifact through it (upload
// and download over TLS); an untrusted certificate and plain http are refused.
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "protocol/client.h"
#include "protocol/worker.h"
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

}  // namespace
}  // namespace scimesh
