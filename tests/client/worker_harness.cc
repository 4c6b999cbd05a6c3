// The worker harness: spool, options for fast tests, Serve() on a thread.
#include "tests/client/worker_harness.h"

#include <cstdlib>

namespace scimesh::testing {

WorkerHarness::WorkerHarness(const std::string& token, int64_t lease_ttl_ms, int64_t heartbeat_ms)
    : fake_(token, lease_ttl_ms, heartbeat_ms) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "scimesh-client-XXXXXX").string();
  spool_ = ::mkdtemp(tmpl.data());
  options_.client.coordinator_url = fake_.url();
  options_.client.token = Token(token);
  options_.client.backoff = BackoffPolicy{Millis(20), 2.0, 0.5, Millis(200)};
  options_.client.retry_budget = Millis(2000);
  options_.client.call_timeout = Millis(3000);
  options_.worker_id = "test-host/1";
  options_.concurrency = 1;
  options_.spool_dir = spool_;
  options_.wait_ms = 200;
  options_.on_lease_finished = [this](const LeaseReport& r) {
    std::lock_guard<std::mutex> lock(mu_);
    reports_.push_back(r);
    cv_.notify_all();
  };
}

WorkerHarness::~WorkerHarness() {
  if (serving_.joinable()) (void)StopAndJoin();
  std::error_code ec;
  std::filesystem::remove_all(spool_, ec);
}

void WorkerHarness::Hold(std::map<std::string, StepBody> bodies) { bodies_ = std::move(bodies); }

void WorkerHarness::Start() {
  worker_ = std::make_unique<Worker>(options_);
  WorkflowDefinition def{"wf", "1", {}};
  for (const auto& [id, body] : bodies_) def.steps.push_back(StepDefinition{id, {}, {}, {}, {}, {}, {}, {}});
  if (!def.steps.empty()) {
    Status s = worker_->Register(def, bodies_);
    if (!s.ok()) std::abort();
  }
  serving_ = std::thread([this] {
    Status s = worker_->Serve();
    std::lock_guard<std::mutex> lock(mu_);
    served_ = s;
    cv_.notify_all();
  });
}

std::optional<LeaseReport> WorkerHarness::NextReport(Millis timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return reports_.size() > taken_; })) return std::nullopt;
  return reports_[taken_++];
}

Status WorkerHarness::StopAndJoin() {
  if (worker_) worker_->Stop();
  if (serving_.joinable()) serving_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return served_.value_or(Status::Internal("never served"));
}

std::optional<Status> WorkerHarness::JoinWithin(Millis timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return served_.has_value(); })) return std::nullopt;
  lock.unlock();
  serving_.join();
  return served_;
}

}  // namespace scimesh::testing
