// Internals shared by the ledger_*.cc files: the per-transaction context,
// the attempt row, the transaction wrapper and small SQL/JSON helpers.
// Not part of the coordinator's interface.
#pragma once

#include <spdlog/spdlog.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "coordinator/json_text.h"
#include "coordinator/ledger.h"
#include "coordinator/wire_time.h"

namespace scimesh::coordinator {

// What one transaction did besides its writes: log lines and signals are
// emitted only after the commit, so nothing is announced that did not happen.
struct Ledger::Tx {
  int64_t now = 0;
  std::vector<std::string> log;
  bool work_available = false;
  std::optional<int64_t> due;
  bool keep = false;  // commit even though the call is refused (the clock's changes)

  void Due(int64_t at) {
    if (!due || at < *due) due = at;
  }
  template <typename... Args>
  void Log(fmt::format_string<Args...> f, Args&&... args) {
    log.push_back(fmt::format(f, std::forward<Args>(args)...));
  }
};

// An attempt with what the rules need of its step and run.
struct Ledger::AttemptRow {
  std::string lease_id;
  std::string run_id;
  std::string step_id;
  int64_t attempt = 0;
  std::string worker_id;
  std::string key_name;
  AttemptState status = AttemptState::kLeased;
  AttemptState prev_status = AttemptState::kLeased;  // before orphaned
  std::optional<int64_t> started_at;
  int64_t expires_at = 0;
  std::string workflow;
  std::string version;
  RunState run_status = RunState::kRunning;
  std::optional<int64_t> run_deadline;
  int64_t step_attempts = 0;
  int64_t step_spent = 0;
  std::optional<std::string> progress_json;  // the last heartbeated progress
};

// Statements of more than one ledger_*.cc file.
inline constexpr char kSelectDefinition[] = "SELECT canonical FROM definitions WHERE workflow = ?1 AND version = ?2";
inline constexpr char kSpendBudget[] = "UPDATE steps SET spent = spent + 1 WHERE run_id = ?1 AND step_id = ?2";

// Columns LoadAttempt/LoadAttempts read, in this order (see ReadAttemptRow).
#define SCIMESH_ATTEMPT_COLUMNS                                                                    \
  "SELECT a.lease_id, a.run_id, a.step_id, a.attempt, a.worker_id, a.key_name, a.status, "        \
  "a.prev_status, a.started_at, a.expires_at, r.workflow, r.version, r.status, r.deadline_at, "   \
  "s.attempts, s.spent, a.progress FROM attempts a JOIN runs r ON r.run_id = a.run_id "                       \
  "JOIN steps s ON s.run_id = a.run_id AND s.step_id = a.step_id "

// One call waiting for (or in) a batch.
struct Ledger::Work {
  std::function<bool(Tx&)> run;  // the call; true: keep its changes
  Tx tx;
  bool kept = false;
  bool done = false;
  Status failure;  // the batch could not begin or commit
};

template <typename T, typename Body>
ApiResult<T> Ledger::Transact(Body&& body) {
  std::optional<ApiResult<T>> result;
  Work work;
  work.run = [&](Tx& tx) {
    result.emplace(body(tx));
    return result->ok() || (tx.keep && result->error().http_status < 500);
  };
  Execute(work);
  if (!work.failure.ok() && work.kept) return Broken(work.failure);
  if (!result) return Broken(work.failure.ok() ? Status::Internal("call not run") : work.failure);
  if (work.kept) {
    for (const auto& line : work.tx.log) spdlog::info("{}", line);
    if (work.tx.work_available && signals_.work_available) signals_.work_available();
    if (work.tx.due && signals_.clock_due) signals_.clock_due(*work.tx.due);
  }
  return std::move(*result);
}

// Builds a small JSON object of string members (journal details).
inline std::string DetailJson(std::initializer_list<std::pair<const char*, std::string>> members) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  for (const auto& [k, v] : members) {
    w.Key(k);
    WriteString(w, v);
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// An error `{"class": ..., "message": ...}` (an attempt's, a step's), or
// null when there is no class.
inline std::string ErrorJson(const std::optional<std::string>& error_class, const std::optional<std::string>& message) {
  if (!error_class) return "null";
  return DetailJson({{"class", *error_class}, {"message", message.value_or("")}});
}

// A journal detail: `detail_json` (an object) plus what the attempt reported,
// `progress` (last heartbeated) and `usage` (from complete), where present.
std::string WithReport(std::string_view detail_json, const std::optional<std::string>& progress_json,
                       const std::optional<std::string>& usage_json = std::nullopt);

// Evaluates a Status-returning expression inside a ledger body; on failure
// answers the call with the storage error.
#define LEDGER_CHECK(expr)                        \
  do {                                            \
    ::scimesh::Status ledger_status_ = (expr);    \
    if (!ledger_status_.ok()) return Broken(ledger_status_); \
  } while (0)

}  // namespace scimesh::coordinator
