// Ledger: the coordinator's durable state (SQLite, WAL) and every protocol
// rule that changes it. Each call is one transaction (BEGIN IMMEDIATE): the
// lease checks of docs/protocol.md "Refusals" and the change they allow are
// applied together, and a call is answered only after its commit is on disk.
//
// Thread-safe, with group commit: concurrent calls queue; the first in line
// runs the whole queue in one SQLite transaction — each call inside its own
// SAVEPOINT, so a refused or failed call leaves no trace — and commits once
// (one fsync for the batch). Each call is answered only after that commit.
// The clock is stored, not kept in memory: expiry, grace and deadlines are
// computed from stored times on every call and by Sweep(), so they hold across
// restarts; "now" comes from Options::clock, once per call.
// Tenancy (coordinator/tenancy.h): calls that take the caller's key refuse
// another key's worker_id, workflow or run with a 403 `not_owner`. Failures: protocol refusals come back as ApiError (400/403/404/409);
// storage failures as ApiError 503/500 (and are logged with their cause).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coordinator/api_error.h"
#include "coordinator/clock.h"
#include "coordinator/database.h"
#include "coordinator/definition.h"
#include "coordinator/keys.h"
#include "coordinator/lease_rules.h"
#include "coordinator/requests.h"
#include "protocol/wire/wire.h"

namespace scimesh::coordinator {

// What RecordUpload stored: the artifact as issued, and whether this call
// stored it (false: a replay of the same name and sha256).
struct RecordedUpload {
  ArtifactRef ref;
  bool created = false;
};

// The replies are protocol/wire.h's types (one wire model with the client),
// times already in their wire spelling.
class Ledger {
 public:
  struct Options {
    int64_t lease_ttl_ms = 30000;
    int64_t heartbeat_ms = 10000;
    int64_t grace_ms = 30000;
    RetryPolicy retry;
    std::string public_url = "http://127.0.0.1:8470";  // artifact URIs are built from it
    ArtifactQuota artifact_quota{1024, int64_t{16} << 30};  // what one lease may upload
    int64_t artifact_grace_ms = 3600000;  // uploads of an attempt that did not complete live this long after it
    std::shared_ptr<const WallClock> clock = DefaultWallClock();  // never null
  };

  // Called after a commit, on the calling thread, without the Ledger's lock.
  struct Signals {
    std::function<void()> work_available;    // offerable work may exist: wake long polls
    std::function<void(int64_t)> clock_due;  // a clock-driven change falls due at this time (ms)
  };

  static Result<std::unique_ptr<Ledger>> Open(const std::string& db_path, Options options, Signals signals);
  ~Ledger();

  // The worker_id becomes `key`'s when nobody holds it; each workflow it
  // registers first becomes `key`'s (an admin key's too).
  ApiResult<RegisterResponse> Register(const Registration& reg, const KeyIdentity& key);
  // One pass: offers what is offerable now (possibly nothing). The long poll
  // around it lives in the HTTP layer.
  ApiResult<ClaimResponse> Claim(const ClaimRequest& req, const KeyIdentity& key);

  ApiResult<ExtendResponse> Started(std::string_view lease_id, const LeaseCaller& caller);
  ApiResult<ExtendResponse> Heartbeat(std::string_view lease_id, const LeaseCaller& caller,
                                      const std::optional<std::string>& progress_json);
  ApiResult<Done> Complete(std::string_view lease_id, const LeaseCaller& caller, const CompleteRequest& req);
  ApiResult<FailResponse> Fail(std::string_view lease_id, const LeaseCaller& caller, const FailRequest& req);

  // Artifact upload, in two steps around the streaming of the bytes: the lease
  // checks (and the name/sha256 conflict, and the lease's artifact quota with
  // `declared_size` when known, else -1) before, the record after (the quota
  // again, with the size received).
  ApiResult<Done> CheckUpload(std::string_view lease_id, const LeaseCaller& caller, const std::string& name,
                              const std::string& sha256, int64_t declared_size);
  ApiResult<RecordedUpload> RecordUpload(std::string_view lease_id, const LeaseCaller& caller,
                                         const std::string& name, const std::string& sha256, int64_t size,
                                         const std::string& media_type);
  // The media type of a stored artifact; 404 when none was uploaded. A key
  // with neither the worker, admin nor read scope gets only the artifacts of
  // its own runs (403 `not_owner` otherwise).
  ApiResult<std::string> FindArtifact(std::string_view sha256, const KeyIdentity& key);

  // The run belongs to `key`.
  ApiResult<RunStatus> CreateRun(const RunCreateRequest& req, const KeyIdentity& key);
  ApiResult<RunStatus> CancelRun(std::string_view run_id, const KeyIdentity& key);
  ApiResult<RunView> ShowRun(std::string_view run_id, const KeyIdentity& key);
  ApiResult<scimesh::Journal> Journal(std::string_view run_id, const KeyIdentity& key);
  // The runs `key` may read (MayReadRun: an execute key its own, read and
  // admin keys every run) that match `query`, newest first, at most
  // query.limit of them.
  ApiResult<RunList> ListRuns(const RunListQuery& query, const KeyIdentity& key);
  // The queued work of the running runs, per step of each (workflow, version)
  // `key` may register (docs/protocol.md "demand"), at most kMaxDemandGroups
  // groups. Naming a workflow `key` may not register: 403 `not_owner`.
  ApiResult<QueuedDemand> Demand(const DemandQuery& query, const KeyIdentity& key);

  // Forgets the uploads of attempts that ended without completing more than
  // artifact_grace_ms ago (their files go once nothing refers to them).
  Status ForgetAbandonedUploads();
  // Whether an upload or a completed step's artifact refers to `sha256`.
  Result<bool> ArtifactReferenced(std::string_view sha256);

  // Applies what the clock has made due (run deadlines, lease expiry, grace
  // windows, ended backoffs). Returns when the next such change falls due
  // (ms since the epoch), or nullopt when nothing is pending.
  Result<std::optional<int64_t>> Sweep();

  const Options& options() const { return options_; }

 private:
  struct Tx;
  struct AttemptRow;
  struct Work;
  using DefinitionPtr = std::shared_ptr<const WorkflowDefinition>;

  Ledger(std::unique_ptr<Database> db, Options options, Signals signals);

  // Runs `body(tx)` in a write transaction (see group commit above); keeps
  // its changes when it succeeds (or when it set tx.keep), and after the
  // commit emits its logs and signals.
  template <typename T, typename Body>
  ApiResult<T> Transact(Body&& body);
  // Joins (or leads) a batch; returns once `work` is committed or failed.
  void Execute(Work& work);
  void RunBatch(const std::vector<Work*>& batch);
  ApiError Broken(const Status& status);
  std::optional<ApiError> OverQuota(std::string_view lease_id, const std::string& name, int64_t size);
  // The artifact uploaded as `name` on this lease, if any.
  Result<std::optional<ArtifactRef>> LoadUpload(std::string_view lease_id, const std::string& name);
  ApiResult<std::optional<ArtifactRef>> EarlierUpload(std::string_view lease_id, const std::string& name,
                                                      const std::string& sha256);

  Result<DefinitionPtr> Definition(const std::string& workflow, const std::string& version);
  Status AppendEvent(Tx& tx, const std::string& run_id, std::string_view type,
                     const std::optional<std::string>& step_id, std::optional<int64_t> attempt,
                     const std::optional<std::string>& worker_id, const std::string& detail_json);

  // Lease calls: load, apply the clock, decide. On a refusal the clock's
  // changes are kept (tx.keep) and the ApiError answers the call.
  ApiResult<AttemptRow> OpenLease(Tx& tx, std::string_view lease_id, const LeaseCaller& caller, LeaseCall call);
  // started and heartbeat (`call`): the lease lives another TTL from now, and
  // an orphaned attempt is revived.
  ApiResult<ExtendResponse> Extend(std::string_view lease_id, const LeaseCaller& caller, LeaseCall call,
                                   const std::optional<std::string>& progress_json);
  Result<std::optional<AttemptRow>> LoadAttempt(std::string_view lease_id);
  Result<std::vector<AttemptRow>> LoadAttempts(const char* sql, int64_t bound);
  Status ApplyClock(Tx& tx, AttemptRow& row);
  Status OrphanAttempt(Tx& tx, AttemptRow& row);
  Status ExpireAttempt(Tx& tx, AttemptRow& row);

  // Step and run transitions (ledger_progress.cc).
  Status RequeueStep(Tx& tx, const AttemptRow& cause, int64_t delay_ms, std::string_view reason);
  Status FailStepForGood(Tx& tx, const std::string& run_id, const std::string& step_id,
                         std::optional<int64_t> attempt, const std::optional<std::string>& worker_id,
                         std::string_view error_class, std::string_view message);
  Status FinishRun(Tx& tx, const std::string& run_id, RunState state);
  // Queues every waiting step whose needs completed (rendering its input),
  // then completes the run when every step completed.
  Status PromoteWaiting(Tx& tx, const std::string& run_id, bool journal_runnable);
  // A waiting step becomes queued with its rendered input (journaled when
  // `journal_runnable`).
  Status QueueStep(Tx& tx, const std::string& run_id, const std::string& step_id, const std::string& input_json,
                   bool journal_runnable);

  ApiResult<RunView> ReadRun(std::string_view run_id);
  ApiResult<scimesh::Journal> ReadJournal(std::string_view run_id);
  // Tenancy (ledger_tenancy.cc): the owner stored in `sql` for `id`.
  Result<std::optional<std::string>> OwnerOf(const char* sql, std::string_view id);
  ApiResult<Done> CheckWorker(Tx& tx, const std::string& worker_id, const KeyIdentity& key);
  ApiResult<Done> CheckWorkflows(Tx& tx, const Registration& reg, const KeyIdentity& key);
  // 404 for an unknown run, 403 when `may` refuses its owner.
  ApiResult<Done> CheckRun(std::string_view run_id, const KeyIdentity& key,
                           bool (*may)(const KeyIdentity&, const std::optional<std::string>&));
  Status SetOwner(const char* sql, std::string_view id, const std::string& key_name);
  // The workflows whose demand `key` reads: `named` (403 when it may not
  // register one), else those of running runs it may register, by name.
  ApiResult<std::vector<std::string>> DemandWorkflows(const std::vector<std::string>& named, const KeyIdentity& key);
  // Appends the demand groups of `workflow` to `out`, at most `room`+1 of them.
  Status AddDemandOf(int64_t now, const std::string& workflow, size_t room, QueuedDemand& out);

  Result<Lease> CreateLease(Tx& tx, const std::string& run_id, const StepDefinition& step,
                            const WorkflowDefinition& def, const std::string& worker_id,
                            const std::string& key_name);

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::vector<Work*> queue_;  // waiting calls, in arrival order
  bool committing_ = false;   // a leader is running a batch
  // Touched only by the leader of the running batch:
  std::unique_ptr<Database> db_;
  Options options_;
  Signals signals_;
  std::map<std::pair<std::string, std::string>, DefinitionPtr> definitions_;  // immutable: safe to cache
  std::mt19937_64 jitter_rng_;
  int64_t last_sweep_ms_ = 0;
};

}  // namespace scimesh::coordinator
