// Ledger: what the clock does — lease expiry (orphaned), the end of the grace
// window (expired: requeue or fail), run deadlines, ended backoffs — applied
// from stored times by every lease call and by the sweeper.
#include "coordinator/ledger_internal.h"

namespace scimesh::coordinator {
namespace {

constexpr int kSweepBatch = 256;

constexpr char kOrphanAttempt[] =
    "UPDATE attempts SET status = 'orphaned', prev_status = ?2 WHERE lease_id = ?1";
constexpr char kSetStepStatusIfCurrent[] =
    "UPDATE steps SET status = ?3 WHERE run_id = ?1 AND step_id = ?2 AND attempts = ?4";
constexpr char kExpireAttempt[] =
    "UPDATE attempts SET status = 'expired', prev_status = NULL, ended_at = ?2, error_class = ?3, "
    "error_message = ?4 WHERE lease_id = ?1";
constexpr char kSelectDeadlinesDue[] =
    "SELECT run_id FROM runs WHERE status = 'running' AND deadline_at IS NOT NULL AND deadline_at <= ?1 "
    "LIMIT 256";
constexpr char kSelectLeasesPastExpiry[] = SCIMESH_ATTEMPT_COLUMNS
    "WHERE a.status IN ('leased', 'running') AND a.expires_at <= ?1 ORDER BY a.expires_at LIMIT 256";
constexpr char kSelectOrphansPastGrace[] = SCIMESH_ATTEMPT_COLUMNS
    "WHERE a.status = 'orphaned' AND a.expires_at <= ?1 ORDER BY a.expires_at LIMIT 256";
constexpr char kSelectBackoffEnded[] =
    "SELECT 1 FROM steps WHERE status = 'queued' AND not_before > ?1 AND not_before <= ?2 LIMIT 1";
constexpr char kMinLiveExpiry[] = "SELECT MIN(expires_at) FROM attempts WHERE status IN ('leased', 'running')";
constexpr char kMinOrphanExpiry[] = "SELECT MIN(expires_at) FROM attempts WHERE status = 'orphaned'";
constexpr char kMinDeadline[] = "SELECT MIN(deadline_at) FROM runs WHERE status = 'running'";
constexpr char kMinBackoff[] = "SELECT MIN(not_before) FROM steps WHERE status = 'queued' AND not_before > ?1";

}  // namespace

Status Ledger::OrphanAttempt(Tx& tx, AttemptRow& row) {
  SCIMESH_RETURN_IF_ERROR(db_->Run(kOrphanAttempt, {row.lease_id, Name(row.status)}));
  SCIMESH_RETURN_IF_ERROR(db_->Run(kSetStepStatusIfCurrent, {row.run_id, row.step_id, "orphaned", row.attempt}));
  SCIMESH_RETURN_IF_ERROR(AppendEvent(tx, row.run_id, "attempt_orphaned", row.step_id, row.attempt, row.worker_id,
                                      DetailJson({{"lease_expires_at", FormatWireTime(row.expires_at)}})));
  tx.Log("attempt orphaned: run={} step={} attempt={} lease={} worker_id={} reason=no heartbeat before expiry",
         row.run_id, row.step_id, row.attempt, row.lease_id, row.worker_id);
  row.prev_status = row.status;
  row.status = AttemptState::kOrphaned;
  tx.Due(row.expires_at + options_.grace_ms);
  return Status::Ok();
}

Status Ledger::ExpireAttempt(Tx& tx, AttemptRow& row) {
  auto def = Definition(row.workflow, row.version);
  if (!def.ok()) return def.status();
  const StepDefinition* step = *def ? (*def)->FindStep(row.step_id) : nullptr;
  if (step == nullptr) return Status::Internal("attempt " + row.lease_id + " names an unknown step");

  const bool body_started = row.started_at.has_value();
  std::uniform_real_distribution<double> jitter(-1.0, 1.0);
  FailureVerdict v = DecideExpiry(*step, body_started, row.step_spent, options_.retry, jitter(jitter_rng_));
  std::string message;
  if (!body_started) {
    message = "the lease expired before the body started";
  } else if (step->delivery == Delivery::kAtMostOnce) {
    message = "the lease expired after the body started; at_most_once: it is not run again";
  } else {
    message = "the lease expired (no heartbeat) and its grace window ended";
  }
  SCIMESH_RETURN_IF_ERROR(db_->Run(kExpireAttempt, {row.lease_id, tx.now, kLeaseExpiredClass, message}));
  SCIMESH_RETURN_IF_ERROR(
      AppendEvent(tx, row.run_id, "attempt_expired", row.step_id, row.attempt, row.worker_id,
                              WithReport("{}", row.progress_json)));
  // A step whose leases keep expiring unstarted is requeued for free each
  // time; the log says so, so that a worker that never sends `started` shows.
  tx.Log("attempt expired: run={} step={} attempt={} lease={} worker_id={} reason=grace window ended{}",
         row.run_id, row.step_id, row.attempt, row.lease_id, row.worker_id,
         body_started ? "" : " before started (the retry budget is not spent)");
  row.status = AttemptState::kExpired;
  if (v.spends_budget) SCIMESH_RETURN_IF_ERROR(db_->Run(kSpendBudget, {row.run_id, row.step_id}));
  if (v.requeue) return RequeueStep(tx, row, v.delay_ms, kLeaseExpiredClass);
  if (v.spends_budget) message += "; the retry budget is spent";
  return FailStepForGood(tx, row.run_id, row.step_id, row.attempt, row.worker_id, kLeaseExpiredClass, message);
}

Status Ledger::ApplyClock(Tx& tx, AttemptRow& row) {
  ClockEffect effect = ClockEffectAt(row.status, row.expires_at, options_.grace_ms, tx.now);
  if (effect == ClockEffect::kOrphan || effect == ClockEffect::kOrphanAndExpire) {
    SCIMESH_RETURN_IF_ERROR(OrphanAttempt(tx, row));
  }
  if (effect == ClockEffect::kExpire || effect == ClockEffect::kOrphanAndExpire) {
    SCIMESH_RETURN_IF_ERROR(ExpireAttempt(tx, row));
  }
  return Status::Ok();
}

Result<std::optional<int64_t>> Ledger::Sweep() {
  auto result = Transact<std::optional<int64_t>>([&](Tx& tx) -> ApiResult<std::optional<int64_t>> {
    bool more = false;
    std::vector<std::string> runs_due;
    LEDGER_CHECK(db_->ForEachRow(kSelectDeadlinesDue, {tx.now}, [&](const Row& r) { runs_due.push_back(r.Text(0)); }));
    more = more || runs_due.size() == kSweepBatch;
    for (const auto& run_id : runs_due) LEDGER_CHECK(FinishRun(tx, run_id, RunState::kTimedOut));

    // Batches are re-read row by row: an earlier change (a run failing) may
    // already have settled a later attempt of the same batch.
    for (auto [sql, bound] : {std::pair{kSelectLeasesPastExpiry, tx.now},
                              std::pair{kSelectOrphansPastGrace, tx.now - options_.grace_ms}}) {
      auto rows = LoadAttempts(sql, bound);
      if (!rows.ok()) return Broken(rows.status());
      more = more || rows->size() == kSweepBatch;
      for (const auto& stale : *rows) {
        auto fresh = LoadAttempt(stale.lease_id);
        if (!fresh.ok()) return Broken(fresh.status());
        if (*fresh) LEDGER_CHECK(ApplyClock(tx, **fresh));
      }
    }
    auto backoff_ended = db_->Exists(kSelectBackoffEnded, {last_sweep_ms_, tx.now});
    if (!backoff_ended.ok()) return Broken(backoff_ended.status());
    if (*backoff_ended) tx.work_available = true;
    last_sweep_ms_ = tx.now;

    std::optional<int64_t> next;
    auto consider = [&](const char* sql, int64_t offset, SqlParams params) -> Status {
      return db_->FirstRow(sql, params, [&](const Row& r) {
                   if (r.IsNull(0)) return;
                   const int64_t at = r.Int(0) + offset;
                   if (!next || at < *next) next = at;
                 }).status();
    };
    LEDGER_CHECK(consider(kMinLiveExpiry, 0, {}));
    LEDGER_CHECK(consider(kMinOrphanExpiry, options_.grace_ms, {}));
    LEDGER_CHECK(consider(kMinDeadline, 0, {}));
    LEDGER_CHECK(consider(kMinBackoff, 0, {tx.now}));
    if (more) next = tx.now;
    return next;
  });
  if (!result.ok()) return Status::Unavailable("sweep: " + result.error().message);
  return std::move(result).value();
}

}  // namespace scimesh::coordinator
