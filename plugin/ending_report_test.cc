// The fail report for SLURM's endings, against a loopback fake coordinator.
#include "plugin/ending_report.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace scimesh::spank {
namespace {

TEST(EndingReport, ClassesFollowTheEnding) {
  // scancel of the whole job: the allocation ended, as without the plugin.
  EXPECT_EQ(FailClassFor(SlurmEnding::kCancelled), FailClass::kPreempted);
  EXPECT_EQ(FailClassFor(SlurmEnding::kTimeLimit), FailClass::kPreempted);
  EXPECT_EQ(FailClassFor(SlurmEnding::kPreempted), FailClass::kPreempted);
  EXPECT_EQ(FailClassFor(SlurmEnding::kNodeFailure), FailClass::kNodeFailure);
  EXPECT_FALSE(FailClassFor(SlurmEnding::kNone));
}

TEST(EndingReport, QueryWithoutSlurmIsUnavailableNotACrash) {
  auto r = QueryJobEnding(1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
}

TEST(EndingReport, TokenText) {
  EXPECT_EQ(TokenFromText("  abc\n").value().secret(), "abc");
  EXPECT_FALSE(TokenFromText("").ok());
  EXPECT_FALSE(TokenFromText("a b").ok());
  EXPECT_FALSE(TokenFromText(std::string(5000, 'a')).ok());
}

class FakeCoordinator {
 public:
  explicit FakeCoordinator(int status, std::string body) {
    server_.Post(R"(/v1/api/steps/([^/]+)/fail)", [this, status, body](const httplib::Request& req,
                                                                      httplib::Response& res) {
      ++calls;
      last_auth = req.get_header_value("Authorization");
      last_body = req.body;
      res.status = status;
      res.set_content(body, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the listen loop runs is lost and the join would hang:
    // wait until it runs.
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeCoordinator() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::atomic<int> calls{0};
  std::string last_auth, last_body;

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

ReportTarget Target() { return {Token("tok-123"), "worker-1", "l_0c8e51d2a4b94f17", 2}; }

// lease.json as the step left it: `named` is its coordinator_url.
LeaseFile FileNaming(const std::string& named) {
  LeaseFile f;
  f.lease.lease_id = "l_0c8e51d2a4b94f17";
  f.coordinator_url = named;
  return f;
}

PluginConfig FastConfig(const std::string& url) {
  PluginConfig c;
  c.url = url;
  c.call_timeout = std::chrono::milliseconds(1000);
  return c;
}

constexpr Millis kBudget{3000};

TEST(EndingReport, SendsFailWithTheLeasesToken) {
  FakeCoordinator fake(200, R"({"outcome": "failed", "requeued": true, "next_attempt_not_before": null})");
  Status s = ReportEnding(FastConfig(fake.url()), FileNaming(fake.url()), Target(), FailClass::kCancelled,
                          "SLURM ended job 7 (cancelled)", kBudget);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(fake.calls.load(), 1);
  EXPECT_EQ(fake.last_auth, "Bearer tok-123");
  EXPECT_NE(fake.last_body.find(R"("class":"cancelled")"), std::string::npos) << fake.last_body;
  EXPECT_NE(fake.last_body.find(R"("worker_id":"worker-1")"), std::string::npos);
  EXPECT_NE(fake.last_body.find(R"("attempt":2)"), std::string::npos);
}

TEST(EndingReport, SettledElsewhereIsSuccess) {
  FakeCoordinator fake(409, R"({"error": "conflict", "reason": "fenced", "message": "superseded"})");
  EXPECT_TRUE(ReportEnding(FastConfig(fake.url()), FileNaming(""), Target(), FailClass::kPreempted, "x", kBudget).ok());
  EXPECT_EQ(fake.calls.load(), 1);  // a 409 is never retried
}

TEST(EndingReport, NotStartedIsAnError) {
  FakeCoordinator fake(409, R"({"error": "conflict", "reason": "not_started", "message": "no started"})");
  EXPECT_FALSE(ReportEnding(FastConfig(fake.url()), FileNaming(""), Target(), FailClass::kCancelled, "x", kBudget).ok());
}

TEST(EndingReport, TheKeyNeverGoesToTheCoordinatorLeaseJsonNames) {
  // The step (or another user) wrote lease.json naming its own listener.
  FakeCoordinator site(200, R"({"outcome": "failed", "requeued": true})");
  FakeCoordinator planted(200, R"({"outcome": "failed", "requeued": true})");
  Status s = ReportEnding(FastConfig(site.url()), FileNaming(planted.url()), Target(), FailClass::kCancelled, "x",
                          kBudget);
  EXPECT_EQ(s.code(), Code::kPermissionDenied);
  EXPECT_EQ(planted.calls.load(), 0);
  EXPECT_EQ(site.calls.load(), 0);
}

TEST(EndingReport, WithoutUrlThePluginNeverTalksToTheNetwork) {
  FakeCoordinator named(200, R"({"outcome": "failed", "requeued": true})");
  PluginConfig c = FastConfig("http://127.0.0.1:1");
  c.url.reset();
  Status s = ReportEnding(c, FileNaming(named.url()), Target(), FailClass::kCancelled, "x", kBudget);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(named.calls.load(), 0);
  EXPECT_EQ(ReportUrl(c, FileNaming(named.url())).status().code(), Code::kNotFound);
}

TEST(EndingReport, RetriesStopOneTryBeforeTheBudgetEnds) {
  // The client's last try starts when its retry budget ends and may take a
  // whole try: both must fit in the report's budget, or the plugin has
  // stopped waiting (exit_timeout_ms) before the report ends or is logged.
  PluginConfig c;
  c.call_timeout = Millis(500);
  ClientOptions o = ReportClientOptions(c, "http://127.0.0.1:1", Token("t"), Millis(2000));
  EXPECT_EQ(o.call_timeout, Millis(500));
  EXPECT_EQ(o.retry_budget, Millis(1500));
  EXPECT_LE(o.connect_timeout, o.call_timeout);
  // A budget shorter than one try: one try, cut to the budget.
  o = ReportClientOptions(c, "http://127.0.0.1:1", Token("t"), Millis(300));
  EXPECT_EQ(o.call_timeout, Millis(300));
  EXPECT_EQ(o.retry_budget, Millis(0));
  // No budget left: no time for a try at all.
  o = ReportClientOptions(c, "http://127.0.0.1:1", Token("t"), Millis(-5));
  EXPECT_EQ(o.call_timeout, Millis(0));
  EXPECT_EQ(o.retry_budget, Millis(0));
}

TEST(EndingReport, UnreachableCoordinatorGivesUpWithinTheBudget) {
  // A port nothing listens on: connection refused, retried within the budget.
  httplib::Server probe;
  int port = probe.bind_to_any_port("127.0.0.1");
  probe.stop();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  Status s = ReportEnding(FastConfig(url), FileNaming(url), Target(), FailClass::kCancelled, "x", Millis(1500));
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace scimesh::spank
