// Opening the attempt directory and its lease.json as the job owner.
#include "plugin/lease_files.h"

#include "protocol/json_io.h"
#include "protocol/wire_json.h"

namespace scimesh::spank {

Result<LeaseFiles> OpenLeaseFiles(const LeaseTarget& target, JobOwner owner) {
  LeaseFiles f;
  SCIMESH_ASSIGN_OR_RETURN(f.dir, OpenOwnedDirectory(target.attempt_dir, owner, "attempt directory"));
  SCIMESH_ASSIGN_OR_RETURN(std::string text,
                           ReadOwnedFileAt(f.dir.get(), "lease.json", owner, 1u << 20, false, "lease.json"));
  auto lease = ParseLease(text);
  if (!lease.ok()) return Status::InvalidArgument("lease.json: " + lease.status().message());
  f.lease = std::move(lease).value();
  if (!target.lease_id.empty() && target.lease_id != f.lease.lease_id) {
    return Status::InvalidArgument("lease.json holds lease " + f.lease.lease_id + ", not " + target.lease_id);
  }
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(text, "lease.json"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  SCIMESH_ASSIGN_OR_RETURN(auto url, o.OptString("coordinator_url"));
  f.coordinator_url = url.value_or("");
  return f;
}

}  // namespace scimesh::spank
