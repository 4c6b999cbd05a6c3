// SQLite connection, statement cache, queries and transactions.
#include "coordinator/database.h"

#include <chrono>

#include <sqlite3.h>

#include <spdlog/spdlog.h>

namespace scimesh::coordinator {

Status SqliteStatus(int rc, sqlite3* db, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return Status::Ok();
  std::string msg(what);
  msg += ": ";
  msg += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xFF) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return Status::Unavailable(std::move(msg));
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY: return Status::Io(std::move(msg));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return Status::DataLoss(std::move(msg));
    default: return Status::Internal(std::move(msg));
  }
}

Query::~Query() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

Query::Query(Query&& other) noexcept : stmt_(other.stmt_), db_(other.db_), bind_error_(other.bind_error_) {
  other.stmt_ = nullptr;
}

Query& Query::Bind(int index, const SqlParam& value) {
  int rc = SQLITE_OK;
  switch (value.kind_) {
    case SqlParam::kNull: rc = sqlite3_bind_null(stmt_, index); break;
    case SqlParam::kInt: rc = sqlite3_bind_int64(stmt_, index, value.int_); break;
    case SqlParam::kText:
      rc = sqlite3_bind_text64(stmt_, index, value.text_.data(), value.text_.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      break;
  }
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

Query& Query::BindAll(SqlParams params) {
  int index = 1;
  for (const SqlParam& p : params) Bind(index++, p);
  return *this;
}

Result<bool> Query::Step() {
  if (bind_error_ != 0) return SqliteStatus(bind_error_, db_, "bind");
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(rc, db_, "step");
}

Status Query::Run() {
  for (;;) {
    Result<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

int64_t Row::Int(int col) const { return sqlite3_column_int64(stmt_, col); }

std::string Row::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
}

std::optional<std::string> Row::OptText(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Text(col);
}

std::optional<int64_t> Row::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

bool Row::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

Result<std::unique_ptr<Database>> Database::Open(const std::string& path, const char* schema) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  std::unique_ptr<Database> db(new Database(raw));
  if (rc != SQLITE_OK) return SqliteStatus(rc, raw, "open database");
  sqlite3_busy_timeout(raw, 5000);
  SCIMESH_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL"));
  SCIMESH_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous=FULL"));
  SCIMESH_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON"));
  SCIMESH_RETURN_IF_ERROR(db->Exec(schema));
  return db;
}

Database::~Database() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  if (db_ != nullptr) {
    int rc = sqlite3_close_v2(db_);
    if (rc != SQLITE_OK) spdlog::warn("database: close failed: {}", sqlite3_errstr(rc));
  }
}

Result<Query> Database::Sql(const char* sql, SqlParams params) {
  std::string_view key(sql);
  auto it = statements_.find(key);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(rc, db_, "prepare");
    it = statements_.emplace(key, stmt).first;
  }
  Query q(it->second, db_);
  q.BindAll(params);
  return q;
}

Status Database::Run(const char* sql, SqlParams params) {
  SCIMESH_ASSIGN_OR_RETURN(Query q, Sql(sql, params));
  return q.Run();
}

Result<std::optional<std::string>> Database::FirstText(const char* sql, SqlParams params) {
  std::optional<std::string> value;
  SCIMESH_RETURN_IF_ERROR(FirstRow(sql, params, [&](const Row& r) { value = r.Text(0); }).status());
  return value;
}

Result<std::optional<int64_t>> Database::FirstInt(const char* sql, SqlParams params) {
  std::optional<int64_t> value;
  SCIMESH_RETURN_IF_ERROR(FirstRow(sql, params, [&](const Row& r) { value = r.Int(0); }).status());
  return value;
}

Status Database::Exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (err != nullptr) sqlite3_free(err);
  return SqliteStatus(rc, db_, "exec");
}

Status Database::Begin() {
  static constexpr char kBegin[] = "BEGIN IMMEDIATE";
  return Run(kBegin);
}

namespace {
std::function<void(double)>& CommitObserver() {
  static std::function<void(double)> observer;
  return observer;
}
}  // namespace

void Database::ObserveCommits(std::function<void(double seconds)> observer) {
  CommitObserver() = std::move(observer);
}

Status Database::Commit() {
  static constexpr char kCommit[] = "COMMIT";
  auto q = Sql(kCommit);
  if (!q.ok()) return q.status();
  const auto started = std::chrono::steady_clock::now();
  Status s = q->Run();
  if (CommitObserver()) CommitObserver()(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!s.ok()) Rollback();  // a failed COMMIT leaves the transaction open
  return s;
}

void Database::Rollback() {
  if (sqlite3_get_autocommit(db_)) return;  // nothing open
  int rc = sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) spdlog::warn("database: rollback failed: {}", sqlite3_errmsg(db_));
}

}  // namespace scimesh::coordinator
