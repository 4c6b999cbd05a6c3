// Append-only JSON-lines audit log of run reads.
#include "coordinator/audit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "coordinator/json_text.h"
#include "coordinator/wire_time.h"

namespace scimesh::coordinator {

Result<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Io(std::string("cannot open the audit log: ") + std::strerror(errno));
  std::FILE* f = ::fdopen(fd, "a");
  if (f == nullptr) {
    ::close(fd);
    return Status::Io("cannot open the audit log stream");
  }
  return std::unique_ptr<AuditLog>(new AuditLog(f));
}

AuditLog::~AuditLog() { std::fclose(file_); }

void AuditLog::Record(std::string_view key_name, std::string_view method, std::string_view path, int status) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("time");
  WriteString(w, FormatWireTime(NowMs()));
  w.Key("key");
  WriteString(w, key_name);
  w.Key("method");
  WriteString(w, method);
  w.Key("path");
  WriteString(w, path);
  w.Key("status");
  w.Int(status);
  w.EndObject();
  std::lock_guard<std::mutex> lock(mu_);
  if (std::fprintf(file_, "%s\n", buf.GetString()) < 0 || std::fflush(file_) != 0) {
    spdlog::warn("audit: cannot append to the audit log: {}", std::strerror(errno));
  }
}

}  // namespace scimesh::coordinator
