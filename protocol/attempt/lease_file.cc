// lease.json: read safely, parsed once, its coordinator checked against configuration.
#include "protocol/attempt/lease_file.h"

#include "protocol/attempt/attempt_files.h"
#include "protocol/util/json_io.h"
#include "protocol/util/url.h"
#include "protocol/wire/wire_json.h"

namespace scimesh {

Result<LeaseFile> ParseLeaseFile(std::string_view json) {
  LeaseFile f;
  auto lease = ParseLease(json);
  if (!lease.ok()) return lease.status().WithContext(kLeaseFileName);
  f.lease = std::move(lease).value();
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, kLeaseFileName));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  auto url = o.OptString("coordinator_url");
  if (!url.ok()) return url.status().WithContext(kLeaseFileName);
  f.coordinator_url = url->value_or("");
  return f;
}

Result<LeaseFile> ReadLeaseFileAt(int dir_fd, uid_t owner) {
  SCIMESH_ASSIGN_OR_RETURN(std::string text, ReadAttemptFile(dir_fd, kLeaseFileName, owner, kMaxLeaseFileBytes));
  return ParseLeaseFile(text);
}

Status CheckLeaseFileOrigin(const LeaseFile& file, std::string_view configured_url) {
  if (file.coordinator_url.empty()) return Status::Ok();
  auto want = ParseUrl(configured_url);
  if (!want.ok()) return want.status().WithContext("the configured coordinator URL");
  auto got = ParseUrl(file.coordinator_url);
  if (!got.ok() || !SameOrigin(*want, *got)) {
    return Status::PermissionDenied(std::string(kLeaseFileName) +
                                    " names a coordinator other than the configured one (refused; the key is "
                                    "only ever sent to the configured coordinator)");
  }
  return Status::Ok();
}

}  // namespace scimesh
