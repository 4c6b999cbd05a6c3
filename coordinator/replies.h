// Typed replies of docs/protocol.md, as the Ledger produces them; responses.h
// turns them into the wire JSON. Plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/definition.h"
#include "coordinator/requests.h"
#include "coordinator/states.h"

namespace scimesh::coordinator {

struct RegisterReply {
  std::string worker_id;
  int64_t lease_ttl_ms = 0;
  int64_t heartbeat_ms = 0;
};

struct InputArtifact {
  std::string step_id;
  ArtifactRef ref;
};

// The lease object of docs/protocol.md "The lease".
struct Lease {
  std::string lease_id;
  std::string run_id;
  std::string step_id;
  std::string workflow;
  std::string version;
  int64_t attempt = 0;
  std::string input_json;        // rendered
  std::string previous_json;     // {step_id: output}
  std::string run_state_json;
  std::string correlation_json;  // "null" when none
  std::string idempotency_key;
  std::string trace_id;
  std::string span_id;
  Delivery delivery = Delivery::kAtLeastOnce;
  Resources resources;
  int64_t walltime_s = 0;
  std::vector<InputArtifact> input_artifacts;
  ArtifactQuota artifact_quota;
  std::string lease_token;  // set by the HTTP layer, which holds the secret
  int64_t lease_ttl_ms = 0;
  int64_t heartbeat_ms = 0;
  int64_t expires_at_ms = 0;
};

struct ClaimReply {
  std::vector<Lease> leases;
};

// started / heartbeat.
struct LeaseExtension {
  int64_t expires_at_ms = 0;
  int64_t ttl_ms = 0;
};

struct FailReply {
  bool requeued = false;
  std::optional<int64_t> not_before_ms;
};

struct ArtifactReply {
  ArtifactRef ref;
  bool created = false;  // 201 on first upload, 200 on a replay
};

struct RunStatusReply {
  std::string run_id;
  RunState status = RunState::kRunning;
};

struct AttemptView {
  int64_t attempt = 0;
  std::string lease_id;
  std::string worker_id;
  AttemptState status = AttemptState::kLeased;
  int64_t claimed_at = 0;
  std::optional<int64_t> started_at;
  std::optional<int64_t> ended_at;
  std::optional<std::string> error_class;
  std::optional<std::string> error_message;
  std::optional<std::string> progress_json;  // the last heartbeated progress
  std::optional<std::string> usage_json;     // what `complete` reported
};

// A queued step no live worker can fit (docs/protocol.md "Unfittable steps").
struct Unfittable {
  std::string reason;  // "needs 3 nodes, largest offer 2"
  int64_t workers = 0;  // the live workers holding its definition, all too small
};

struct StepView {
  std::string step_id;
  std::string status;  // waiting, queued, leased, running, orphaned, completed, failed, cancelled
  std::vector<AttemptView> attempts;
  std::optional<std::string> output_json;
  std::vector<ArtifactRef> artifacts;
  std::optional<Unfittable> unfittable;  // queued steps only
};

struct RunView {
  std::string run_id;
  std::string workflow;
  std::string version;
  RunState status = RunState::kRunning;
  std::string input_json;
  std::string state_json;
  std::string correlation_json;
  int64_t created_at = 0;
  std::optional<int64_t> finished_at;
  std::optional<int64_t> deadline_at;
  std::vector<StepView> steps;
};

struct JournalEvent {
  int64_t seq = 0;
  int64_t at = 0;
  std::string type;
  std::optional<std::string> step_id;
  std::optional<int64_t> attempt;
  std::optional<std::string> worker_id;
  std::string detail_json = "{}";
};

struct JournalView {
  std::string run_id;
  std::vector<JournalEvent> events;
};

}  // namespace scimesh::coordinator
