// Opening the attempt directory and its lease.json as the job owner.
#include "plugin/lease_files.h"

#include "protocol/attempt/attempt_files.h"

namespace scimesh::spank {

Result<LeaseFiles> OpenLeaseFiles(const LeaseTarget& target, JobOwner owner) {
  LeaseFiles f;
  SCIMESH_ASSIGN_OR_RETURN(f.dir, OpenOwnedDirectory(target.attempt_dir, owner, "attempt directory"));
  SCIMESH_ASSIGN_OR_RETURN(std::string text, ReadOwnedFileAt(f.dir.get(), kLeaseFileName, owner, kMaxLeaseFileBytes,
                                                             false, kLeaseFileName));
  SCIMESH_ASSIGN_OR_RETURN(f.file, ParseLeaseFile(text));
  if (!target.lease_id.empty() && target.lease_id != f.lease().lease_id) {
    return Status::InvalidArgument("lease.json holds lease " + f.lease().lease_id + ", not " + target.lease_id);
  }
  return f;
}

}  // namespace scimesh::spank
