// The scrape-time queries of /metrics.
#include "coordinator/metrics_queries.h"

#include <sqlite3.h>

namespace scimesh::coordinator {
namespace {

constexpr char kQueuedByWorkflow[] =
    "SELECT r.workflow, COUNT(*) FROM steps s JOIN runs r ON r.run_id = s.run_id "
    "WHERE s.status = 'queued' AND r.status = 'running' GROUP BY r.workflow";
constexpr char kLeasesHeld[] = "SELECT COUNT(*) FROM attempts WHERE status IN ('leased', 'running')";
constexpr char kLeasesOrphaned[] = "SELECT COUNT(*) FROM attempts WHERE status = 'orphaned'";
constexpr char kExpiries[] = "SELECT COUNT(*) FROM journal WHERE type = 'attempt_expired'";

// Runs `sql`, calling `row` for each result row.
template <typename Row>
Status Each(sqlite3* db, const char* sql, Row row) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
    return Status::Internal(std::string("metrics query: ") + sqlite3_errmsg(db));
  }
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) row(stmt);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) return Status::Unavailable(std::string("metrics query: ") + sqlite3_errstr(rc));
  return Status::Ok();
}

Result<int64_t> Count(sqlite3* db, const char* sql) {
  int64_t n = 0;
  SCIMESH_RETURN_IF_ERROR(Each(db, sql, [&](sqlite3_stmt* s) { n = sqlite3_column_int64(s, 0); }));
  return n;
}

}  // namespace

Result<std::unique_ptr<LedgerGaugeReader>> LedgerGaugeReader::Open(const std::string& db_path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return Status::Io("cannot open the database for metrics");
  }
  sqlite3_busy_timeout(db, 1000);
  return std::unique_ptr<LedgerGaugeReader>(new LedgerGaugeReader(db));
}

LedgerGaugeReader::~LedgerGaugeReader() { sqlite3_close(db_); }

Result<LedgerGauges> LedgerGaugeReader::Read() {
  LedgerGauges g;
  // One read transaction: the figures are of one moment.
  sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr);
  Status s = Each(db_, kQueuedByWorkflow, [&](sqlite3_stmt* st) {
    g.queued_by_workflow[reinterpret_cast<const char*>(sqlite3_column_text(st, 0))] = sqlite3_column_int64(st, 1);
  });
  Result<int64_t> held = s.ok() ? Count(db_, kLeasesHeld) : Result<int64_t>(s);
  Result<int64_t> orphaned = held.ok() ? Count(db_, kLeasesOrphaned) : Result<int64_t>(held.status());
  Result<int64_t> expiries = orphaned.ok() ? Count(db_, kExpiries) : Result<int64_t>(orphaned.status());
  sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  if (!expiries.ok()) return expiries.status();
  g.leases_held = *held;
  g.leases_orphaned = *orphaned;
  g.expiries = *expiries;
  return g;
}

}  // namespace scimesh::coordinator
