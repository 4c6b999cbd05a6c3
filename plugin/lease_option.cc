// --scimesh-lease values: an attempt directory or a lease id.
#include "plugin/lease_option.h"

#include "protocol/wire/identifiers.h"

namespace scimesh::spank {
namespace {

constexpr size_t kMaxPath = 4095;

Result<std::string> CheckDirectory(std::string_view value) {
  if (value.size() > kMaxPath) return Status::InvalidArgument("the path is longer than 4095 bytes");
  if (value.empty() || value.front() != '/') {
    return Status::InvalidArgument("must be an absolute attempt directory or a lease id (l_ + 16 hex digits)");
  }
  for (unsigned char ch : value) {
    if (ch < 0x20 || ch == 0x7f) return Status::InvalidArgument("the path holds a control character");
  }
  std::string normal;
  size_t pos = 1;
  while (pos <= value.size()) {
    size_t next = value.find('/', pos);
    if (next == std::string_view::npos) next = value.size();
    std::string_view part = value.substr(pos, next - pos);
    if (part == "..") return Status::InvalidArgument("the path must not contain '..'");
    if (!part.empty() && part != ".") {
      normal += '/';
      normal += part;
    }
    pos = next + 1;
  }
  if (normal.empty()) return Status::InvalidArgument("'/' is not an attempt directory");
  return normal;
}

}  // namespace

Result<LeaseTarget> ParseLeaseOption(std::string_view value) {
  LeaseTarget t;
  if (value.starts_with("l_")) {
    if (!CheckLeaseId(value, "lease").ok()) {
      return Status::InvalidArgument("'" + std::string(value.substr(0, 40)) +
                                     "' is not a lease id (l_ + 16 lowercase hex digits)");
    }
    t.lease_id = std::string(value);
    return t;
  }
  SCIMESH_ASSIGN_OR_RETURN(t.attempt_dir, CheckDirectory(value));
  return t;
}

Result<LeaseTarget> ResolveLeaseTarget(LeaseTarget target, std::string_view attempt_dir_env) {
  if (!target.attempt_dir.empty()) return target;
  if (attempt_dir_env.empty()) {
    return Status::InvalidArgument("a lease id needs the attempt directory in " + std::string(kAttemptDirEnv));
  }
  auto dir = CheckDirectory(attempt_dir_env);
  if (!dir.ok()) return Status::InvalidArgument(std::string(kAttemptDirEnv) + ": " + dir.status().message());
  target.attempt_dir = std::move(dir).value();
  return target;
}

}  // namespace scimesh::spank
