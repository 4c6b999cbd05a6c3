// AuditLog: one JSON line per read of a run (time, key name, method, path,
// status), appended to a file. Worker calls are not audited (see
// docs/coordinator.md). Thread-safe.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "protocol/status.h"

namespace scimesh::coordinator {

class AuditLog {
 public:
  // Opens `path` for appending (created 0600).
  static Result<std::unique_ptr<AuditLog>> Open(const std::string& path);
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Appends and flushes one line. A write failure is logged, not returned:
  // the read it records has already been answered.
  void Record(std::string_view key_name, std::string_view method, std::string_view path, int status);

 private:
  explicit AuditLog(std::FILE* f) : file_(f) {}
  std::mutex mu_;
  std::FILE* file_;
};

}  // namespace scimesh::coordinator
