// The worker protocol's wire types (docs/protocol.md): plain values, one per JSON body.
//
// Every type here is a copyable value with no behaviour; wire_json.h parses and
// writes them. JSON that the protocol treats as opaque (a step's input, outputs,
// run state, correlation, progress) is kept as compact JSON text in a
// `std::string` so these stay simple values; the parsers guarantee it is valid.
// Not thread-safe to mutate concurrently (like any value).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/wire/wire_limits.h"

namespace scimesh {

// The four 409 reasons: a closed set, each handled by name (docs/protocol.md).
enum class RefusalReason {
  kAlreadyApplied,  // a complete/fail of this lease+attempt was recorded: success, write nothing more
  kFenced,          // this attempt no longer holds the step: abandon, write nothing more
  kRunTerminal,     // the run is over: stop, stop claiming for that run
  kNotStarted,      // complete/fail of an at_most_once attempt never started: a worker bug
};

// The error classes of `fail` (docs/protocol.md, table under /fail).
enum class FailClass {
  kRetryable,
  kTimeout,
  kCancelled,
  kNodeFailure,
  kInvalidOutput,
  kInputChecksum,
  kFatal,
  kUnservable,
  kPreempted,
  kStorageFull,
};

// Classes that spend the retry budget, the only ones a step's `retry_on` may
// name (all but fatal, unservable, preempted, storage_full).
bool SpendsBudget(FailClass c);

// Classes a step may report of itself (scimesh_step_fail, failure.json):
// retryable, timeout, invalid_output, input_checksum, fatal. The others say
// what the launcher or the scheduler saw (cancelled, node_failure,
// preempted) or what the worker cannot serve (unservable, storage_full).
bool StepMayReport(FailClass c);

enum class Delivery { kAtLeastOnce, kAtMostOnce };

// An attempt's and a run's states (docs/protocol.md "State machines"), as
// `run show` and the journal spell them.
enum class AttemptState { kLeased, kRunning, kOrphaned, kCompleted, kFailed, kExpired, kCancelled };
enum class RunState { kRunning, kCompleted, kFailed, kTimedOut, kCancelled };

// Wire spellings ("already_applied", "node_failure", "at_most_once") and back.
std::string_view RefusalReasonName(RefusalReason reason);
std::optional<RefusalReason> ParseRefusalReason(std::string_view name);
std::string_view FailClassName(FailClass cls);
std::optional<FailClass> ParseFailClass(std::string_view name);
std::string_view DeliveryName(Delivery delivery);
std::optional<Delivery> ParseDelivery(std::string_view name);
std::string_view AttemptStateName(AttemptState state);
std::optional<AttemptState> ParseAttemptState(std::string_view name);
std::string_view RunStateName(RunState state);
std::optional<RunState> ParseRunState(std::string_view name);

// A step's demand: `nodes` nodes, each running ranks_per_node ranks.
struct Resources {
  int64_t nodes = 1;
  int64_t ranks_per_node = 1;
  int64_t cpus_per_rank = 1;
  int64_t gpus_per_rank = 0;
  friend bool operator==(const Resources&, const Resources&) = default;
};

// ---- register ----

// One step of a definition. Optional fields left unset are omitted on the
// wire so the coordinator applies its documented defaults.
struct StepDefinition {
  std::string id;
  std::vector<std::string> needs;
  std::optional<std::string> input_json;  // the input template, JSON text
  std::optional<Resources> resources;
  std::optional<int64_t> walltime_s;
  std::optional<int64_t> max_attempts;
  std::optional<Delivery> delivery;
  std::optional<std::vector<FailClass>> retry_on;
  friend bool operator==(const StepDefinition&, const StepDefinition&) = default;
};

struct WorkflowDefinition {
  std::string workflow;
  std::string version;
  std::vector<StepDefinition> steps;
  friend bool operator==(const WorkflowDefinition&, const WorkflowDefinition&) = default;
};

struct RegisterRequest {
  std::string worker_id;
  std::string host;
  std::string version;
  int64_t concurrency = 1;
  std::vector<WorkflowDefinition> definitions;
};

struct RegisterResponse {
  std::string worker_id;
  int64_t lease_ttl_ms = 0;
  int64_t heartbeat_ms = 0;
};

// ---- claim ----

struct FreeNode {
  std::string name;
  int64_t cpus = 0;
  int64_t gpus = 0;
};

// Extension: what the worker can still give a step (capacity-aware offers).
struct FreeCapacity {
  std::vector<FreeNode> nodes;
  int64_t walltime_s = 0;
};

struct ClaimRequest {
  std::string worker_id;
  int64_t max = 1;
  int64_t wait_ms = 0;
  std::optional<std::string> run_id;
  std::optional<FreeCapacity> free;
};

// An artifact as the coordinator issued it (upload response, complete request).
struct ArtifactRef {
  std::string name;
  std::string uri;
  std::string sha256;  // 64 lowercase hex
  int64_t size = 0;
  std::string media_type;
  friend bool operator==(const ArtifactRef&, const ArtifactRef&) = default;
};

// An artifact of a step in `needs`, offered with a lease.
struct InputArtifact {
  std::string step_id;
  std::string name;
  std::string uri;
  std::string sha256;
  int64_t size = 0;
  std::string media_type;
};

// One attempt of one step, as claimed. Every field of the contract.
// What one lease may upload (docs/protocol.md, "Quotas"): distinct names and
// bytes in all. Absent from a lease: kMaxArtifacts files, bytes unbounded (0).
struct ArtifactQuota {
  int64_t count = static_cast<int64_t>(kMaxArtifacts);
  int64_t bytes = 0;  // 0: no bound told
};

struct Lease {
  std::string lease_id;
  std::string run_id;
  std::string step_id;
  std::string workflow;
  std::string version;
  int64_t attempt = 0;
  std::string input_json;        // any JSON
  std::string previous_json;     // object: outputs of the steps in `needs`, by step id
  std::string run_state_json;    // object
  std::string correlation_json;  // any JSON, "null" when absent
  std::string idempotency_key;
  std::string trace_id;
  std::string span_id;
  Delivery delivery = Delivery::kAtLeastOnce;
  Resources resources;
  int64_t walltime_s = 0;
  std::vector<InputArtifact> input_artifacts;
  ArtifactQuota artifact_quota;
  // The credential of this lease and attempt alone (docs/protocol.md, "The
  // lease token"): what the step's processes use instead of the worker key.
  // Empty from a coordinator that issues none. A secret: never logged.
  std::string lease_token;
  int64_t lease_ttl_ms = 0;
  int64_t heartbeat_ms = 0;
  std::string lease_expires_at;  // informational: deadlines come from lease_ttl_ms
};

struct ClaimResponse {
  std::vector<Lease> leases;
};

// ---- lease calls ----

// started and heartbeat share the request shape; progress only on heartbeat.
struct BeatRequest {
  std::string worker_id;
  int64_t attempt = 0;
  std::optional<std::string> progress_json;
};

// The started/heartbeat response: the lease's new expiry.
struct ExtendResponse {
  std::string lease_expires_at;
  int64_t lease_ttl_ms = 0;
};

struct CompleteRequest {
  std::string worker_id;
  int64_t attempt = 0;
  std::string output_json = "{}";  // must be a JSON object
  std::optional<std::string> state_patch_json;
  std::optional<std::string> usage_json;
  std::vector<ArtifactRef> artifacts;
};

struct CompleteResponse {
  std::string outcome;  // "completed"
};

struct FailRequest {
  std::string worker_id;
  int64_t attempt = 0;
  FailClass error_class = FailClass::kFatal;
  std::string message;
};

struct FailResponse {
  std::string outcome;  // "failed"
  bool requeued = false;
  std::optional<std::string> next_attempt_not_before;
};

// Every non-2xx body. `reason` and `outcome` come with 409s.
struct ErrorBody {
  std::string error;
  std::optional<std::string> field;
  std::string message;
  std::optional<std::string> reason;
  std::optional<std::string> outcome;
};

// ---- runs (scope execute) ----

struct RunCreateRequest {
  std::string workflow;
  std::optional<std::string> version;
  std::string input_json = "{}";
  std::optional<std::string> correlation_json;
  std::optional<int64_t> deadline_s;
};

// The create and cancel responses.
struct RunStatus {
  std::string run_id;
  std::string status;
};

struct AttemptView {
  int64_t attempt = 0;
  std::string lease_id;
  std::string worker_id;
  std::optional<std::string> host;  // the host its worker registered with; nullopt: unknown
  std::string status;
  std::optional<std::string> claimed_at, started_at, ended_at;
  std::string error_json;  // JSON, "null" when none
  std::string progress_json = "null";  // the last heartbeated `progress`, "null" when none
  std::string usage_json = "null";     // the `usage` it completed with, "null" when none
};

// A queued step no live worker can fit (docs/protocol.md "Unfittable steps").
struct UnfittableView {
  std::string reason;  // "needs 3 nodes, largest offer 2"
  int64_t workers = 0;
};

struct StepView {
  std::string step_id;
  std::string status;
  std::vector<AttemptView> attempts;
  std::string output_json;  // JSON, "null" when none
  std::vector<ArtifactRef> artifacts;
  std::optional<UnfittableView> unfittable;  // absent or null on the wire: none
  // Why a failed or cancelled step ended: {"class": ..., "message": ...};
  // "null" otherwise (docs/protocol.md "Runs").
  std::string error_json = "null";
};

struct RunView {
  std::string run_id;
  std::string workflow;
  std::string version;
  std::string status;
  std::string input_json;
  std::string state_json;
  std::string correlation_json;
  std::string created_at;
  std::optional<std::string> finished_at, deadline_at;
  // Why a failed, timed-out or cancelled run ended; nullopt while it runs
  // and once it completed.
  std::optional<std::string> reason;
  std::vector<StepView> steps;
};

// GET /v1/api/runs: which runs, newest first.
struct RunListQuery {
  std::optional<std::string> workflow;
  std::optional<std::string> state;  // a run state's name
  int64_t limit = kDefaultRunList;   // 1..kMaxRunList
};

// One run in the list.
struct RunSummary {
  std::string run_id;
  std::string workflow;
  std::string version;
  std::string status;
  std::string correlation_json = "null";
  std::string created_at;
  std::optional<std::string> finished_at;
};

struct RunList {
  std::vector<RunSummary> runs;
  bool more = false;  // more runs matched than were returned
};

// GET /v1/api/demand (docs/protocol.md "demand"): which workflows; empty:
// every workflow the key may register.
struct DemandQuery {
  std::vector<std::string> workflows;  // at most kMaxDemandWorkflows
};

// The queued work of one step of one (workflow, version), in running runs.
struct DemandGroup {
  std::string workflow;
  std::string version;
  std::string step_id;
  Resources resources;
  int64_t walltime_s = 0;
  int64_t runnable = 0;     // queued, backoff over: offerable now
  int64_t backing_off = 0;  // queued, backoff not over
  int64_t waiting = 0;      // needs not completed
  int64_t running = 0;      // leased, running or orphaned
  int64_t live_workers = 0;  // live workers holding (workflow, version)
  // Of `runnable`, how many their largest offers hold; nullopt: one of them
  // has no known offer.
  std::optional<int64_t> claimable_by_live_workers;
  std::optional<UnfittableView> unfittable;
};

// The demand answer: at most kMaxDemandGroups groups.
struct QueuedDemand {
  std::vector<DemandGroup> groups;
  bool more = false;  // more groups matched than were returned
  std::string at;     // the coordinator's time of the answer
};

struct JournalEvent {
  int64_t seq = 0;
  std::string at;
  std::string type;
  std::optional<std::string> step_id;
  std::optional<int64_t> attempt;
  std::optional<std::string> worker_id;
  std::string detail_json;
};

struct Journal {
  std::string run_id;
  std::vector<JournalEvent> events;
};

}  // namespace scimesh
