// AuditLog: one JSON line per audited event — run starts, reads and cancels,
// refusals of another key's worker_id or workflow, and failed
// authentications (rate-limited) — with the key's name, never a secret,
// appended to a file. Worker calls are not audited (see docs/coordinator.md).
// Thread-safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "coordinator/clock.h"
#include "protocol/util/status.h"

namespace scimesh::coordinator {

class AuditLog {
 public:
  // At most this many failed authentications are written per window; the
  // rest are counted, and the count is written with the next one written.
  static constexpr int kAuthFailuresPerWindow = 20;
  static constexpr int64_t kAuthWindowMs = 10000;

  // Opens `path` for appending (created 0600). `clock` stamps the lines and
  // paces the failed authentications.
  static Result<std::unique_ptr<AuditLog>> Open(const std::string& path,
                                                std::shared_ptr<const WallClock> clock = DefaultWallClock());
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Appends and flushes one line. A write failure is logged, not returned:
  // the call it records has already been answered. `run_id`, when not
  // empty, names the run (a run start, whose path does not).
  void Record(std::string_view key_name, std::string_view method, std::string_view path, int status,
              std::string_view run_id = {});
  // A request with no key or an unknown key (401), from `peer` (the client's
  // address). Written unless this window's quota is spent; never the key.
  void RecordAuthFailure(std::string_view peer, std::string_view method, std::string_view path);

 private:
  AuditLog(std::FILE* f, std::shared_ptr<const WallClock> clock) : file_(f), clock_(std::move(clock)) {}
  void Append(const std::string& line);

  std::mutex mu_;
  std::FILE* file_;
  std::shared_ptr<const WallClock> clock_;
  int64_t window_start_ms_ = 0;  // guarded by mu_
  int written_in_window_ = 0;
  int64_t suppressed_ = 0;
};

}  // namespace scimesh::coordinator
