// Append-only JSON-lines audit log, with failed authentications paced.
#include "coordinator/audit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

void AuditLog::Record(std::string_view key_name, std::string_view method, std::string_view path, int status,
                      std::string_view run_id) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("time");
  WriteString(w, FormatWireTime(clock_->NowMs()));
  w.Key("key");
  WriteString(w, key_name);
  w.Key("method");
  WriteString(w, method);
  w.Key("path");
  WriteString(w, path);
  w.Key("status");
  w.Int(status);
  if (!run_id.empty()) {
    w.Key("run_id");
    WriteString(w, run_id);
  }
  w.EndObject();
  std::lock_guard<std::mutex> lock(mu_);
  Append(buf.GetString());
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
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("time");
  WriteString(w, FormatWireTime(now));
  w.Key("key");
  w.Null();
  w.Key("method");
  WriteString(w, method);
  w.Key("path");
  WriteString(w, path.substr(0, 256));  // an unauthenticated caller chose it
  w.Key("status");
  w.Int(401);
  w.Key("peer");
  WriteString(w, peer);
  if (suppressed_ > 0) {
    // Failed authentications not written since the last one that was.
    w.Key("suppressed");
    w.Int64(suppressed_);
    suppressed_ = 0;
  }
  w.EndObject();
  Append(buf.GetString());
}

}  // namespace scimesh::coordinator
