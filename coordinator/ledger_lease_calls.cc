// Ledger: the worker's lease calls — started, heartbeat, complete, fail —
// each checked in the order of docs/protocol.md "Refusals" and applied in the
// same transaction.
#include "coordinator/json_text.h"
#include "coordinator/ledger_internal.h"

#include <rapidjson/document.h>

namespace scimesh::coordinator {
namespace {

constexpr char kCancelAttempt[] =
    "UPDATE attempts SET status = 'cancelled', prev_status = NULL, ended_at = ?2 WHERE lease_id = ?1 "
    "AND status IN ('leased', 'running', 'orphaned')";
constexpr char kStartAttempt[] =
    "UPDATE attempts SET status = 'running', prev_status = NULL, started_at = COALESCE(started_at, ?2), "
    "expires_at = ?3 WHERE lease_id = ?1";
constexpr char kExtendAttempt[] =
    "UPDATE attempts SET status = ?2, prev_status = NULL, expires_at = ?3, progress = COALESCE(?4, progress) "
    "WHERE lease_id = ?1";
constexpr char kSetStepStatus[] = "UPDATE steps SET status = ?3 WHERE run_id = ?1 AND step_id = ?2";
constexpr char kCompleteAttempt[] =
    "UPDATE attempts SET status = 'completed', prev_status = NULL, ended_at = ?2, usage = ?3 WHERE lease_id = ?1";
constexpr char kCompleteStep[] =
    "UPDATE steps SET status = 'completed', output = ?3 WHERE run_id = ?1 AND step_id = ?2";
constexpr char kInsertStepArtifact[] =
    "INSERT INTO step_artifacts(run_id, step_id, ord, name, sha256, size, media_type, uri) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
constexpr char kSelectRunState[] = "SELECT state FROM runs WHERE run_id = ?1";
constexpr char kUpdateRunState[] = "UPDATE runs SET state = ?2 WHERE run_id = ?1";
constexpr char kFailAttempt[] =
    "UPDATE attempts SET status = 'failed', prev_status = NULL, ended_at = ?2, error_class = ?3, "
    "error_message = ?4 WHERE lease_id = ?1";
constexpr char kExcludeWorker[] =
    "INSERT OR IGNORE INTO unservable(worker_id, workflow, version, step_id) VALUES (?1, ?2, ?3, ?4)";

// Merges `patch` into the run state: top-level keys replace.
Result<std::string> MergeState(const std::string& state_text, const std::string& patch_text) {
  auto state = ParseJson(state_text);
  auto patch = ParseJson(patch_text);
  if (!state.ok() || !patch.ok() || !state.value()->IsObject() || !patch.value()->IsObject()) {
    return Status::Internal("run state or state_patch is not a JSON object");
  }
  rapidjson::Document& s = *state.value();
  for (auto it = patch.value()->MemberBegin(); it != patch.value()->MemberEnd(); ++it) {
    rapidjson::Value value(it->value, s.GetAllocator());
    auto existing = s.FindMember(it->name);
    if (existing != s.MemberEnd()) {
      existing->value = value;
    } else {
      s.AddMember(rapidjson::Value(it->name, s.GetAllocator()), value, s.GetAllocator());
    }
  }
  return ToJsonText(s);
}

}  // namespace

ApiResult<Ledger::AttemptRow> Ledger::OpenLease(Tx& tx, std::string_view lease_id, const LeaseCaller& caller,
                                                LeaseCall call) {
  auto loaded = LoadAttempt(lease_id);
  if (!loaded.ok()) return Broken(loaded.status());
  // 1. unknown lease.
  if (!*loaded) return ApiError::NotFound("no lease " + std::string(lease_id));
  AttemptRow row = std::move(**loaded);

  // The clock first, from stored times: the verdict sees what the sweeper
  // would have done by now.
  if (row.run_status == RunState::kRunning && row.run_deadline && *row.run_deadline <= tx.now) {
    LEDGER_CHECK(FinishRun(tx, row.run_id, RunState::kTimedOut));
    row.run_status = RunState::kTimedOut;
    if (!IsTerminal(row.status)) row.status = AttemptState::kCancelled;
  }
  if (!IsTerminal(row.run_status)) LEDGER_CHECK(ApplyClock(tx, row));

  auto def = Definition(row.workflow, row.version);
  if (!def.ok()) return Broken(def.status());
  const StepDefinition* step = *def ? (*def)->FindStep(row.step_id) : nullptr;
  if (step == nullptr) return Broken(Status::Internal("lease " + row.lease_id + " names an unknown step"));

  LeaseFacts facts;
  facts.key_name = row.key_name;
  facts.worker_id = row.worker_id;
  facts.attempt = row.attempt;
  facts.state = row.status;
  facts.state_before_orphan = row.prev_status;
  facts.run_terminal = IsTerminal(row.run_status);
  facts.superseded = row.step_attempts > row.attempt;
  facts.delivery = step->delivery;

  const Verdict verdict = DecideLeaseCall(facts, caller, call);
  if (verdict == Verdict::kApply) return row;
  tx.keep = true;  // the clock's changes stand even though the call is refused
  const std::string lease(lease_id);
  switch (verdict) {
    case Verdict::kForbidden:
      return ApiError::Forbidden("lease " + lease + " was claimed with another key");
    case Verdict::kFenced:
      if (caller.worker_id != row.worker_id) {
        return ApiError::Conflict("fenced", "lease " + lease + " is not held by worker " + caller.worker_id);
      }
      if (caller.attempt != row.attempt) {
        return ApiError::Conflict("fenced", "lease " + lease + " is attempt " + std::to_string(row.attempt) +
                                                ", not attempt " + std::to_string(caller.attempt));
      }
      if (facts.superseded) {
        return ApiError::Conflict("fenced", "attempt " + std::to_string(row.attempt) + " of lease " + lease +
                                                " was superseded by attempt " + std::to_string(row.step_attempts));
      }
      return ApiError::Conflict("fenced", "attempt " + std::to_string(row.attempt) + " of lease " + lease + " is " +
                                              std::string(Name(row.status)));
    case Verdict::kAlreadyApplied:
      return ApiError::Conflict("already_applied",
                                "lease " + lease + " attempt " + std::to_string(row.attempt) + " is already " +
                                    std::string(Name(row.status)),
                                std::string(Name(row.status)));
    case Verdict::kRunTerminal: {
      LEDGER_CHECK(db_->Run(kCancelAttempt, {row.lease_id, tx.now}));
      return ApiError::Conflict("run_terminal", "run " + row.run_id + " is " + std::string(Name(row.run_status)));
    }
    case Verdict::kNotStarted:
      return ApiError::Conflict("not_started", "at_most_once attempt " + std::to_string(row.attempt) +
                                                   " of lease " + lease + " never sent started");
    case Verdict::kApply:
      break;
  }
  return row;
}

ApiResult<ExtendResponse> Ledger::Started(std::string_view lease_id, const LeaseCaller& caller) {
  return Extend(lease_id, caller, LeaseCall::kStarted, std::nullopt);
}

ApiResult<ExtendResponse> Ledger::Heartbeat(std::string_view lease_id, const LeaseCaller& caller,
                                            const std::optional<std::string>& progress_json) {
  return Extend(lease_id, caller, LeaseCall::kHeartbeat, progress_json);
}

ApiResult<ExtendResponse> Ledger::Extend(std::string_view lease_id, const LeaseCaller& caller, LeaseCall call,
                                         const std::optional<std::string>& progress_json) {
  const bool started = call == LeaseCall::kStarted;
  return Transact<ExtendResponse>([&](Tx& tx) -> ApiResult<ExtendResponse> {
    auto opened = OpenLease(tx, lease_id, caller, call);
    if (!opened.ok()) return opened.error();
    AttemptRow& row = opened.value();
    const bool revived = row.status == AttemptState::kOrphaned;
    const AttemptState live = revived ? row.prev_status : row.status;
    const int64_t expires = tx.now + options_.lease_ttl_ms;
    if (started) {
      LEDGER_CHECK(db_->Run(kStartAttempt, {row.lease_id, tx.now, expires}));
      LEDGER_CHECK(db_->Run(kSetStepStatus, {row.run_id, row.step_id, "running"}));
    } else {
      LEDGER_CHECK(db_->Run(kExtendAttempt, {row.lease_id, Name(live), expires, progress_json}));
      if (revived) LEDGER_CHECK(db_->Run(kSetStepStatus, {row.run_id, row.step_id, Name(live)}));
    }
    if (revived) {
      LEDGER_CHECK(AppendEvent(tx, row.run_id, "attempt_revived", row.step_id, row.attempt, row.worker_id, "{}"));
      tx.Log("attempt revived: run={} step={} attempt={} worker_id={} reason={} within grace", row.run_id,
             row.step_id, row.attempt, row.worker_id, started ? "started" : "heartbeat");
    }
    if (started && live == AttemptState::kLeased) {
      LEDGER_CHECK(AppendEvent(tx, row.run_id, "attempt_started", row.step_id, row.attempt, row.worker_id, "{}"));
      tx.Log("attempt started: run={} step={} attempt={} lease={} worker_id={}", row.run_id, row.step_id,
             row.attempt, row.lease_id, row.worker_id);
    }
    return ExtendResponse{FormatWireTime(expires), options_.lease_ttl_ms};
  });
}

ApiResult<Done> Ledger::Complete(std::string_view lease_id, const LeaseCaller& caller, const CompleteRequest& req) {
  return Transact<Done>([&](Tx& tx) -> ApiResult<Done> {
    auto opened = OpenLease(tx, lease_id, caller, LeaseCall::kComplete);
    if (!opened.ok()) return opened.error();
    AttemptRow& row = opened.value();

    // Every artifact must be exactly as issued for this lease and attempt.
    for (size_t i = 0; i < req.artifacts.size(); ++i) {
      const ArtifactRef& a = req.artifacts[i];
      const std::string field = "artifacts[" + std::to_string(i) + "]";
      for (size_t j = 0; j < i; ++j) {
        if (req.artifacts[j].name == a.name) return ApiError::BadRequest(field, "lists '" + a.name + "' twice");
      }
      auto upload = LoadUpload(row.lease_id, a.name);
      if (!upload.ok()) return Broken(upload.status());
      if (!upload.value() || !(*upload.value() == a)) {
        return ApiError::BadRequest(field, "was not issued by this coordinator for lease " + row.lease_id +
                                               " attempt " + std::to_string(row.attempt) +
                                               "; upload it with PUT .../artifacts/{name} and list it as returned");
      }
    }
    LEDGER_CHECK(db_->Run(kCompleteAttempt, {row.lease_id, tx.now, req.usage_json}));
    LEDGER_CHECK(db_->Run(kCompleteStep, {row.run_id, row.step_id, req.output_json}));
    for (size_t i = 0; i < req.artifacts.size(); ++i) {
      const ArtifactRef& a = req.artifacts[i];
      LEDGER_CHECK(db_->Run(kInsertStepArtifact, {row.run_id, row.step_id, static_cast<int64_t>(i), a.name, a.sha256,
                                                  a.size, a.media_type, a.uri}));
    }
    if (req.state_patch_json) {
      auto state = db_->FirstText(kSelectRunState, {row.run_id});
      if (!state.ok()) return Broken(state.status());
      auto merged = MergeState(state->value_or("{}"), *req.state_patch_json);
      if (!merged.ok()) return Broken(merged.status());
      LEDGER_CHECK(db_->Run(kUpdateRunState, {row.run_id, *merged}));
    }
    LEDGER_CHECK(AppendEvent(tx, row.run_id, "attempt_completed", row.step_id, row.attempt, row.worker_id,
                             WithReport("{}", row.progress_json, req.usage_json)));
    tx.Log("attempt completed: run={} step={} attempt={} lease={} worker_id={} artifacts={}", row.run_id,
           row.step_id, row.attempt, row.lease_id, row.worker_id, req.artifacts.size());
    LEDGER_CHECK(PromoteWaiting(tx, row.run_id, true));
    return Done{};
  });
}

ApiResult<FailResponse> Ledger::Fail(std::string_view lease_id, const LeaseCaller& caller, const FailRequest& req) {
  return Transact<FailResponse>([&](Tx& tx) -> ApiResult<FailResponse> {
    auto opened = OpenLease(tx, lease_id, caller, LeaseCall::kFail);
    if (!opened.ok()) return opened.error();
    AttemptRow& row = opened.value();
    auto def = Definition(row.workflow, row.version);
    if (!def.ok() || !*def) return Broken(Status::Internal("lease " + row.lease_id + " names an unknown workflow"));
    const StepDefinition* step = (*def)->FindStep(row.step_id);
    if (step == nullptr) return Broken(Status::Internal("lease " + row.lease_id + " names an unknown step"));

    std::uniform_real_distribution<double> jitter(-1.0, 1.0);
    FailureVerdict v = DecideFailure(req.error_class, *step, row.step_spent, options_.retry, jitter(jitter_rng_));
    const std::string cls(Name(req.error_class));
    LEDGER_CHECK(db_->Run(kFailAttempt, {row.lease_id, tx.now, cls, req.message}));
    LEDGER_CHECK(AppendEvent(tx, row.run_id, "attempt_failed", row.step_id, row.attempt, row.worker_id,
                             WithReport(DetailJson({{"class", cls}, {"message", req.message}}), row.progress_json)));
    tx.Log("attempt failed: run={} step={} attempt={} lease={} worker_id={} class={}", row.run_id, row.step_id,
           row.attempt, row.lease_id, row.worker_id, cls);
    if (v.spends_budget) LEDGER_CHECK(db_->Run(kSpendBudget, {row.run_id, row.step_id}));
    if (v.exclude_worker) {
      LEDGER_CHECK(db_->Run(kExcludeWorker, {row.worker_id, row.workflow, row.version, row.step_id}));
    }
    FailResponse reply{"failed", false, std::nullopt};
    if (v.requeue) {
      LEDGER_CHECK(RequeueStep(tx, row, v.delay_ms, cls));
      reply.requeued = true;
      reply.next_attempt_not_before = FormatWireTime(tx.now + v.delay_ms);
    } else {
      std::string why = req.message;
      if (v.spends_budget && step->RetriesOn(req.error_class)) why += " (retry budget spent)";
      LEDGER_CHECK(FailStepForGood(tx, row.run_id, row.step_id, row.attempt, row.worker_id, cls, why));
    }
    return reply;
  });
}

}  // namespace scimesh::coordinator
