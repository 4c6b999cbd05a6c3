// Reading the lease and writing a step's results in its attempt directory.
#include "mpi/step_files.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "protocol/attempt_files.h"
#include "protocol/json_io.h"

namespace scimesh::mpi {
namespace {

std::string Compact(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Io(std::string("write failed: ") + std::strerror(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// Streams `source` into a temporary file beside `dest`, fsyncs, renames.
Status CopyFileAtomically(const std::string& source, const std::string& dest) {
  int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Status::NotFound(std::string("cannot open the source file: ") + std::strerror(errno));
  const std::string tmp = dest + ".tmp." + std::to_string(::getpid());
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0) {
    ::close(in);
    return Status::Io(std::string("cannot create a temporary file: ") + std::strerror(errno));
  }
  Status s;
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = Status::Io(std::string("read failed: ") + std::strerror(errno));
      break;
    }
    if (n == 0) break;
    s = WriteAll(out, std::string_view(buf.data(), static_cast<size_t>(n)));
    if (!s.ok()) break;
  }
  if (s.ok() && ::fsync(out) != 0) s = Status::Io(std::string("fsync failed: ") + std::strerror(errno));
  ::close(in);
  ::close(out);
  if (s.ok() && ::rename(tmp.c_str(), dest.c_str()) != 0) {
    s = Status::Io(std::string("rename failed: ") + std::strerror(errno));
  }
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

}  // namespace

bool IsSafeArtifactName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status WriteFileAtomically(const std::string& path, std::string_view content, int mode) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return Status::Io(std::string("cannot create a temporary file: ") + std::strerror(errno));
  Status s = WriteAll(fd, content);
  if (s.ok() && ::fsync(fd) != 0) s = Status::Io(std::string("fsync failed: ") + std::strerror(errno));
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = Status::Io(std::string("rename failed: ") + std::strerror(errno));
  }
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

Result<LeaseView> ParseLeaseView(std::string_view text) {
  auto parsed = ParseJson(text, kLeaseFileName);  // iterative, depth-limited
  if (!parsed.ok()) return parsed.status();
  const rapidjson::Document& doc = *parsed;
  if (!doc.IsObject()) return Status::InvalidArgument("lease.json is not a JSON object");
  LeaseView v;
  auto id = doc.FindMember("lease_id");
  auto attempt = doc.FindMember("attempt");
  if (id == doc.MemberEnd() || !id->value.IsString()) return Status::InvalidArgument("lease.json: no lease_id");
  if (attempt == doc.MemberEnd() || !attempt->value.IsInt()) return Status::InvalidArgument("lease.json: no attempt");
  v.lease_id = id->value.GetString();
  v.attempt = attempt->value.GetInt();
  auto input = doc.FindMember("input");
  v.input_json = input == doc.MemberEnd() ? "{}" : Compact(input->value);
  auto previous = doc.FindMember("previous");
  v.previous_json = previous == doc.MemberEnd() ? "{}" : Compact(previous->value);
  return v;
}

Result<LeaseView> StepFiles::ReadLease() const {
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd dir, OpenPrivateDirectory(dir_, ::geteuid(), "attempt directory"));
  SCIMESH_ASSIGN_OR_RETURN(std::string text, ReadAttemptFile(dir.get(), kLeaseFileName, ::geteuid(), kMaxLeaseFileBytes));
  return ParseLeaseView(text);
}

Status StepFiles::WriteObject(const char* file, std::string_view json) const {
  auto doc = ParseJson(json, file);
  if (!doc.ok() || !doc->IsObject()) return Status::InvalidArgument(std::string(file) + ": not a JSON object");
  return WriteFileAtomically(dir_ + "/" + file, json).WithContext(file);
}

Status StepFiles::AddArtifact(std::string_view name, const std::string& source,
                              std::string_view media_type) const {
  if (!IsSafeArtifactName(name)) {
    return Status::InvalidArgument("artifact name must be 1-128 chars of [A-Za-z0-9._-], not starting with '.'");
  }
  const std::string dir = dir_ + "/artifacts";
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::Io(std::string("cannot create artifacts/: ") + std::strerror(errno));
  }
  const std::string dest = dir + "/" + std::string(name);
  SCIMESH_RETURN_IF_ERROR(CopyFileAtomically(source, dest).WithContext("artifact"));
  if (!media_type.empty()) {
    // Dot-prefixed: never mistaken for an artifact (names cannot start with '.').
    const std::string sidecar = dir + "/." + std::string(name) + ".media-type";
    SCIMESH_RETURN_IF_ERROR(WriteFileAtomically(sidecar, media_type).WithContext("artifact"));
  }
  return Status::Ok();
}

}  // namespace scimesh::mpi
