// LedgerGaugeReader: the database's side of /metrics, read at scrape time on
// its own read-only SQLite connection (WAL: it never blocks the Ledger's
// writes). Not thread-safe: one scrape at a time (the metrics server has one
// handler thread).
#pragma once

#include <memory>
#include <string>

#include "coordinator/metrics.h"
#include "protocol/util/status.h"

struct sqlite3;

namespace scimesh::coordinator {

class LedgerGaugeReader {
 public:
  static Result<std::unique_ptr<LedgerGaugeReader>> Open(const std::string& db_path);
  ~LedgerGaugeReader();
  LedgerGaugeReader(const LedgerGaugeReader&) = delete;
  LedgerGaugeReader& operator=(const LedgerGaugeReader&) = delete;

  Result<LedgerGauges> Read();

 private:
  explicit LedgerGaugeReader(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace scimesh::coordinator
