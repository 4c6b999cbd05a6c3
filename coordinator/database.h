// A thin SQLite layer: one connection in WAL mode, statements prepared once
// per connection and cached by their named SQL constant, and an immediate
// write transaction. NOT thread-safe: the owner serializes all use (the
// Ledger holds one mutex around every transaction).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "protocol/util/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace scimesh::coordinator {

// One use of a prepared statement: bind, step, read columns. Resets the
// statement (and its bindings) when destroyed, so the cached statement is
// ready for the next use. Parameters and columns are numbered as in SQL
// (?1 is 1; the first column is 0). Bind errors surface at Step().
class Query {
 public:
  explicit Query(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  Query(Query&& other) noexcept;
  Query& operator=(Query&&) = delete;

  Query& Bind(int index, int64_t value);
  Query& Bind(int index, std::string_view text);
  Query& Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Query& Bind(int index, const std::string& text) { return Bind(index, std::string_view(text)); }
  Query& Bind(int index, const std::optional<std::string>& text);
  Query& Bind(int index, const std::optional<int64_t>& value);
  Query& BindNull(int index);

  // True: a row is available; false: done. SQLITE_BUSY -> Code::kUnavailable,
  // disk errors -> Code::kIo, anything else -> Code::kInternal.
  Result<bool> Step();
  // Steps to the end (for statements that return nothing).
  Status Run();

  int64_t Int(int col) const;
  std::string Text(int col) const;
  std::optional<std::string> OptText(int col) const;
  std::optional<int64_t> OptInt(int col) const;
  bool IsNull(int col) const;

 private:
  sqlite3_stmt* stmt_;
  sqlite3* db_;
  int bind_error_ = 0;
};

class Database {
 public:
  // Opens (creating) the database at `path`: WAL mode, synchronous=FULL (a
  // commit is on disk before it returns: an answered 200 is durable),
  // foreign keys on, a busy timeout. Runs `schema` (idempotent DDL).
  static Result<std::unique_ptr<Database>> Open(const std::string& path, const char* schema);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // The statement for `sql`, prepared on first use and cached for the life
  // of the connection. `sql` must be a named constant (static storage): the
  // cache keys on its text.
  Result<Query> Sql(const char* sql);

  // Process-wide: called with each COMMIT's duration in seconds (metrics).
  // Set before any database opens; not changed while one is in use.
  static void ObserveCommits(std::function<void(double seconds)> observer);

  Status Exec(const char* sql);  // for statements without parameters or rows
  Status Begin();                // BEGIN IMMEDIATE: takes the write lock now
  Status Commit();
  void Rollback();  // best effort; errors are logged, not returned

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::unordered_map<std::string_view, sqlite3_stmt*> statements_;
};

// Maps an SQLite result code to a Status (used by Query and Database).
Status SqliteStatus(int rc, sqlite3* db, std::string_view what);

// A write transaction that rolls back unless committed. Not thread-safe.
class WriteTransaction {
 public:
  explicit WriteTransaction(Database& db) : db_(db) {}
  ~WriteTransaction() {
    if (open_) db_.Rollback();
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;

  Status Begin() {
    SCIMESH_RETURN_IF_ERROR(db_.Begin());
    open_ = true;
    return Status::Ok();
  }
  Status Commit() {
    open_ = false;
    return db_.Commit();
  }

 private:
  Database& db_;
  bool open_ = false;
};

}  // namespace scimesh::coordinator
