// A thin SQLite layer: one connection in WAL mode, statements prepared once
// per connection and cached by their named SQL constant, their rows read
// through typed accessors, and an immediate write transaction. NOT
// thread-safe: the owner serializes all use (the Ledger holds one mutex
// around every transaction).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "protocol/util/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace scimesh::coordinator {

// A value for one statement parameter: an integer, text, or NULL (an empty
// optional). Borrows its text: pass it only to the call that binds it.
class SqlParam {
 public:
  SqlParam(int64_t value) : kind_(kInt), int_(value) {}  // NOLINT: implicit by design
  SqlParam(std::string_view text) : kind_(kText), text_(text) {}  // NOLINT
  SqlParam(const std::string& text) : kind_(kText), text_(text) {}  // NOLINT
  SqlParam(const char* text) : kind_(kText), text_(text) {}  // NOLINT
  SqlParam(const std::optional<std::string>& text)  // NOLINT
      : kind_(text ? kText : kNull), text_(text ? std::string_view(*text) : std::string_view()) {}
  SqlParam(const std::optional<int64_t>& value) : kind_(value ? kInt : kNull), int_(value.value_or(0)) {}  // NOLINT

 private:
  friend class Query;
  enum Kind { kNull, kInt, kText };
  Kind kind_;
  int64_t int_ = 0;
  std::string_view text_;
};

// The parameters of one statement, bound to ?1, ?2, ... in order.
using SqlParams = std::initializer_list<SqlParam>;

// The current result row of a stepped statement: typed column accessors
// (the first column is 0). Valid until the statement steps again.
class Row {
 public:
  explicit Row(sqlite3_stmt* stmt) : stmt_(stmt) {}
  int64_t Int(int col) const;
  std::string Text(int col) const;
  std::optional<std::string> OptText(int col) const;
  std::optional<int64_t> OptInt(int col) const;
  bool IsNull(int col) const;

 private:
  sqlite3_stmt* stmt_;
};

// One use of a prepared statement: bind, step, read rows. Resets the
// statement (and its bindings) when destroyed, so the cached statement is
// ready for the next use. Parameters are numbered as in SQL (?1 is 1). Bind
// errors surface at Step().
class Query {
 public:
  explicit Query(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  Query(Query&& other) noexcept;
  Query& operator=(Query&&) = delete;

  Query& Bind(int index, const SqlParam& value);
  // Binds `params` to ?1, ?2, ... in order.
  Query& BindAll(SqlParams params);

  // True: a row is available (row()); false: done. SQLITE_BUSY ->
  // Code::kUnavailable, disk errors -> Code::kIo, anything else -> Code::kInternal.
  Result<bool> Step();
  // Steps to the end (for statements whose rows are not read).
  Status Run();
  Row row() const { return Row(stmt_); }

  // Calls `read(row)` for each result row, in order. `read` returns void, or
  // bool: false stops the reading (not an error).
  template <typename Read>
  Status ForEachRow(Read&& read) {
    for (;;) {
      Result<bool> has = Step();
      if (!has.ok()) return has.status();
      if (!*has) return Status::Ok();
      if constexpr (std::is_same_v<std::invoke_result_t<Read&, const Row&>, bool>) {
        if (!read(row())) return Status::Ok();
      } else {
        read(row());
      }
    }
  }

  // Calls `read(row)` with the first result row, if there is one, then
  // steps the statement to its end (a RETURNING statement's change is then
  // complete). Whether there was a row.
  template <typename Read>
  Result<bool> FirstRow(Read&& read) {
    Result<bool> has = Step();
    if (!has.ok() || !*has) return has;
    read(row());
    SCIMESH_RETURN_IF_ERROR(Run());
    return true;
  }

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
  // of the connection, with `params` bound to ?1, ?2, ... `sql` must be a
  // named constant (static storage): the cache keys on its text.
  Result<Query> Sql(const char* sql, SqlParams params = {});

  // The shapes every use takes: each prepares `sql` (cached), binds `params`
  // and steps it, and returns the first failure of the three.
  //
  // Runs a statement whose rows, if any, are not read.
  Status Run(const char* sql, SqlParams params = {});
  // Calls `read(const Row&)` for each result row (see Query::ForEachRow).
  template <typename Read>
  Status ForEachRow(const char* sql, SqlParams params, Read&& read) {
    SCIMESH_ASSIGN_OR_RETURN(Query q, Sql(sql, params));
    return q.ForEachRow(std::forward<Read>(read));
  }
  // Calls `read(const Row&)` with the first result row: whether there was one.
  template <typename Read>
  Result<bool> FirstRow(const char* sql, SqlParams params, Read&& read) {
    SCIMESH_ASSIGN_OR_RETURN(Query q, Sql(sql, params));
    return q.FirstRow(std::forward<Read>(read));
  }
  // Whether `sql` returns a row.
  Result<bool> Exists(const char* sql, SqlParams params) {
    return FirstRow(sql, params, [](const Row&) {});
  }
  // The first column of the first row; nullopt when there is no row.
  Result<std::optional<std::string>> FirstText(const char* sql, SqlParams params);
  Result<std::optional<int64_t>> FirstInt(const char* sql, SqlParams params);

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
