// Worker: registration, the claim loop sized to free slots, and the executors.
#include "protocol/runtime/worker.h"

#include <unistd.h>

#include <algorithm>

#include "protocol/runtime/lease_runner.h"
#include "protocol/util/host_name.h"
#include "protocol/util/log.h"

namespace scimesh {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("worker"); }

}  // namespace

Worker::Worker(WorkerOptions options) : options_(std::move(options)) {
  if (options_.host.empty()) options_.host = HostName();
  if (options_.worker_id.empty()) options_.worker_id = options_.host + "/" + std::to_string(::getpid());
}

Worker::~Worker() {
  Stop();
  for (auto& t : executors_) {
    if (t.joinable()) t.join();
  }
}

Status Worker::Register(WorkflowDefinition definition, std::map<std::string, StepBody> bodies) {
  for (const auto& step : definition.steps) {
    auto it = bodies.find(step.id);
    if (it == bodies.end() || !it->second) {
      return Status::InvalidArgument(definition.workflow + "/" + definition.version + ": step " + step.id +
                                     " has no body");
    }
  }
  auto key = std::make_pair(definition.workflow, definition.version);
  held_[key] = Held{std::move(definition), std::move(bodies)};
  return Status::Ok();
}

const StepBody* Worker::FindBody(const Lease& lease) const {
  auto it = held_.find({lease.workflow, lease.version});
  if (it == held_.end()) return nullptr;
  auto body = it->second.bodies.find(lease.step_id);
  return body == it->second.bodies.end() ? nullptr : &body->second;
}

void Worker::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  if (claim_client_ != nullptr) claim_client_->Interrupt();  // end the long poll now
  cv_.notify_all();
}

void Worker::NoteRunTerminal(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  terminal_runs_.insert(run_id);
  // Stop claiming for that run: when it is the one run served, stop serving.
  if (options_.run_id == run_id) {
    stopping_ = true;
    if (claim_client_ != nullptr) claim_client_->Interrupt();
  }
  cv_.notify_all();
}

Status Worker::RegisterWithCoordinator(Client& client) {
  RegisterRequest req;
  req.worker_id = options_.worker_id;
  req.host = options_.host;
  req.version = options_.version;
  req.concurrency = options_.concurrency;
  for (const auto& [key, held] : held_) req.definitions.push_back(held.definition);
  auto r = client.Register(req);
  if (!r.ok()) return r.status();
  Log()->info("registered as {} with {} definition(s); lease_ttl_ms {}, heartbeat_ms {}", options_.worker_id,
              req.definitions.size(), r->lease_ttl_ms, r->heartbeat_ms);
  std::lock_guard<std::mutex> lock(mu_);
  lease_ttl_ms_ = r->lease_ttl_ms;
  return Status::Ok();
}

Status Worker::Serve() {
  if (options_.concurrency < 1 || options_.concurrency > 4096) {
    return Status::InvalidArgument("concurrency must be 1-4096");
  }
  if (options_.spool_dir.empty()) return Status::InvalidArgument("spool_dir is required");
  if (::access(options_.spool_dir.c_str(), W_OK | X_OK) != 0) {
    return Status::InvalidArgument("spool_dir is not a writable directory");
  }
  SCIMESH_ASSIGN_OR_RETURN(auto client, Client::Create(options_.client));
  SCIMESH_RETURN_IF_ERROR(RegisterWithCoordinator(*client));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Ok();
    claim_client_ = client.get();
  }
  try {
    for (int i = 0; i < options_.concurrency; ++i) executors_.emplace_back([this, i] { ExecutorMain(i); });
  } catch (const std::exception& e) {
    Stop();
    for (auto& t : executors_) t.join();
    executors_.clear();
    return Status::Internal(std::string("cannot start executor threads: ") + e.what());
  }
  Status result = ClaimLoop(*client);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;  // executors drain the queue, then exit
    claim_client_ = nullptr;
    cv_.notify_all();
  }
  for (auto& t : executors_) t.join();
  executors_.clear();
  return result;
}

Status Worker::ClaimLoop(Client& client) {
  std::mt19937_64 rng(std::random_device{}());
  int failures = 0;
  for (;;) {
    ClaimRequest req;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || busy_ + static_cast<int>(queue_.size()) < options_.concurrency; });
      if (stopping_) return Status::Ok();
      const int free_slots = options_.concurrency - busy_ - static_cast<int>(queue_.size());
      req.worker_id = options_.worker_id;
      req.max = std::min(free_slots, 64);
      req.wait_ms = std::clamp<int64_t>(options_.wait_ms, 0, std::max<int64_t>(0, lease_ttl_ms_ / 2));
      req.run_id = options_.run_id;
    }
    auto r = client.Claim(req);
    if (!r.ok()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return Status::Ok();
      }
      const Code code = r.status().code();
      if (code == Code::kPermissionDenied) return r.status();  // bad key or scope: nothing to wait for
      Log()->warn("{}", r.status().message());  // "claim: <what failed and why>"
      if (code == Code::kInvalidArgument) {
        // The coordinator may have forgotten this worker (a fresh database):
        // register again; if that is refused too, serving is impossible.
        SCIMESH_RETURN_IF_ERROR(RegisterWithCoordinator(client));
      }
      const Millis wait = BackoffDelay(BackoffPolicy{}, ++failures, std::uniform_real_distribution<double>(0, 1)(rng));
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, wait, [&] { return stopping_; })) return Status::Ok();
      continue;
    }
    failures = 0;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& lease : r->response.leases) {
      Log()->info("claimed lease {} (run {}, step {}, attempt {})", lease.lease_id, lease.run_id, lease.step_id,
                  lease.attempt);
      queue_.push_back({std::move(lease), r->sent_at});
    }
    cv_.notify_all();
  }
}

void Worker::ExecutorMain(int index) {
  bool holding = false;  // counted in busy_
  // A thread entry point: nothing may escape it.
  try {
    auto client = Client::Create(options_.client);
    auto beat_client = Client::Create(options_.client);
    if (!client.ok() || !beat_client.ok()) {
      Log()->error("executor {} cannot create its clients: {}", index,
                   (client.ok() ? beat_client.status() : client.status()).ToString());
      Stop();
      return;
    }
    const LeaseRunSetup setup{options_.worker_id, options_.spool_dir, options_.client.coordinator_url};
    for (;;) {
      Pending p;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
        if (queue_.empty()) return;  // stopping, and every claimed lease handled
        p = std::move(queue_.front());
        queue_.pop_front();
        ++busy_;
        holding = true;
      }
      LeaseReport report = RunLease(p.lease, p.claim_sent_at, FindBody(p.lease), **client, **beat_client, setup);
      if (report.lost == CancelReason::kRunTerminal) NoteRunTerminal(report.run_id);
      if (options_.on_lease_finished) options_.on_lease_finished(report);
      {
        std::lock_guard<std::mutex> lock(mu_);
        --busy_;
        holding = false;
      }
      cv_.notify_all();
    }
  } catch (const std::exception& e) {
    Log()->error("executor {} stopped by an unexpected error: {}", index, e.what());
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (holding) --busy_;
    }
    Stop();
  }
}

}  // namespace scimesh
