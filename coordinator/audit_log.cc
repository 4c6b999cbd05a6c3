// Append-only JSON-lines audit log, with failed authentications paced.
#include "coordinator/audit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <spdlog/spdlog.h>

#include "coordinator/json_text.h"
#include "coordinator/wire_time.h"

namespace scimesh::coordinator {

Result<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path, std::shared_ptr<const WallClock> clock) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Io(std::string("cannot open the audit log: ") + std::strerror(errno));
  std::FILE* f = ::fdopen(fd, "a");
  if (f == nullptr) {
    ::close(fd);
    return Status::Io("cannot open the audit log stream");
  }
  return std::unique_ptr<AuditLog>(new AuditLog(f, std::move(clock)));
}

AuditLog::~AuditLog() { std::fclose(file_); }

void AuditLog::Append(const std::string& line) {
  if (std::fprintf(file_, "%s\n", line.c_str()) < 0 || std::fflush(file_) != 0) {
    spdlog::warn("audit: cannot append to the audit log: {}", std::strerror(errno));
  }
}

namespace {

// The members every audit line starts with; no key: null.
void WriteRequest(JsonWriter& w, int64_t now_ms, std::optional<std::string_view> key, std::string_view method,
                  std::string_view path, int status) {
  scimesh::WriteString(w, "time", FormatWireTime(now_ms));
  if (key) {
    scimesh::WriteString(w, "key", *key);
  } else {
    w.Key("key");
    w.Null();
  }
  scimesh::WriteString(w, "method", method);
  scimesh::WriteString(w, "path", path);
  scimesh::WriteInt(w, "status", status);
}

}  // namespace

void AuditLog::Record(std::string_view key_name, std::string_view method, std::string_view path, int status,
                      std::string_view run_id) {
  const std::string line = ObjectText([&](JsonWriter& w) {
    WriteRequest(w, clock_->NowMs(), key_name, method, path, status);
    if (!run_id.empty()) scimesh::WriteString(w, "run_id", run_id);
  });
  std::lock_guard<std::mutex> lock(mu_);
  Append(line);
}

void AuditLog::RecordAuthFailure(std::string_view peer, std::string_view method, std::string_view path) {
  const int64_t now = clock_->NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  if (now - window_start_ms_ >= kAuthWindowMs || now < window_start_ms_) {
    window_start_ms_ = now;
    written_in_window_ = 0;
  }
  if (written_in_window_ >= kAuthFailuresPerWindow) {
    ++suppressed_;
    return;
  }
  ++written_in_window_;
  Append(ObjectText([&](JsonWriter& w) {
    WriteRequest(w, now, std::nullopt, method, path.substr(0, 256), 401);  // an unauthenticated caller chose the path
    scimesh::WriteString(w, "peer", peer);
    if (suppressed_ > 0) {
      // Failed authentications not written since the last one that was.
      scimesh::WriteInt(w, "suppressed", suppressed_);
      suppressed_ = 0;
    }
  }));
}

}  // namespace scimesh::coordinator
