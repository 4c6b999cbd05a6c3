// FakeCoordinator: the worker side's view of a coordinator, on HostileServer,
// with hooks so a test can make any one call misbehave. Test-only code.
//
// It offers the leases a test queues, answers started/heartbeat with a TTL,
// stores uploaded artifacts by SHA-256 (checking the declared one), serves
// them back, and records complete/fail once per lease (replays answer 409
// already_applied, like the contract). Thread-safe.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "protocol/wire/wire.h"
#include "tests/client/hostile_server.h"

namespace scimesh::testing {

class FakeCoordinator {
 public:
  // A hook: return a Reply to override the default answer to a request.
  using Intercept = std::function<std::optional<Reply>(const RecordedRequest&)>;

  explicit FakeCoordinator(std::string token, int64_t lease_ttl_ms = 2000, int64_t heartbeat_ms = 100);
  ~FakeCoordinator();

  std::string url() const { return server_->url(); }
  HostileServer& server() { return *server_; }

  void SetIntercept(Intercept intercept);
  // Applies the next `count` calls named `call` ("complete", ...) as usual,
  // then drops the connection instead of answering: the worker cannot know
  // the call was applied.
  void ApplyThenDrop(const std::string& call, int count);
  // Queues a lease for the next claim.
  void Offer(Lease lease);
  // Stores bytes as an artifact; returns its absolute URI.
  std::string AddBlob(const std::string& bytes);
  // A lease for `step_id` of workflow "wf" version "1" with fresh ids.
  // With a lease_token (LeaseTokenOf) the fake accepts for that lease's own calls.
  Lease MakeLease(const std::string& step_id, Delivery delivery = Delivery::kAtLeastOnce);
  static std::string LeaseTokenOf(const std::string& lease_id);

  // "completed"/"failed" once a complete/fail was recorded for the lease.
  std::optional<std::string> Outcome(const std::string& lease_id) const;
  std::optional<FailRequest> FailOf(const std::string& lease_id) const;
  std::optional<CompleteRequest> CompleteOf(const std::string& lease_id) const;
  // Requests about a lease, by call name ("started", "heartbeat", "complete", "fail", "artifacts").
  size_t CallsFor(const std::string& lease_id, const std::string& call) const;

 private:
  bool Authorized(const RecordedRequest& req) const;
  Reply Handle(const RecordedRequest& req);
  Reply Default(const RecordedRequest& req);

  const std::string token_;
  const int64_t ttl_ms_, heartbeat_ms_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Intercept intercept_;
  std::deque<Lease> offers_;
  std::map<std::string, std::string> blobs_;  // sha256 → bytes
  std::map<std::string, std::string> outcomes_;
  std::map<std::string, FailRequest> fails_;
  std::map<std::string, CompleteRequest> completes_;
  std::map<std::string, Delivery> delivery_;  // of every offered lease
  std::set<std::string> started_;
  int next_id_ = 0;
  std::map<std::string, int> drops_;  // call → answers still to drop
  std::unique_ptr<HostileServer> server_;  // last: destroyed first, after stopping_ is set
};

// The lease id in a path "/v1/api/steps/<id>/<call>[/...]"; empty if none.
std::string LeaseIdOf(const RecordedRequest& req);
std::string CallOf(const RecordedRequest& req);

}  // namespace scimesh::testing
