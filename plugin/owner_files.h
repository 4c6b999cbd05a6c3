// Reading the user's files from a root process without lending it root's
// eyes: the attempt directory, lease.json, lease.state and the token file are
// opened with the job owner's filesystem identity (setfsuid/setfsgid, which
// on Linux affect the calling thread only), the last component is never
// followed through a symlink, and each file must belong to the job owner.
// So a user cannot make the plugin read, or reveal, a file they could not read
// themselves.
//
// Functions are thread-safe (each thread has its own fs identity).
// Failures are kPermissionDenied (not the owner's, a symlink, mode), kNotFound,
// kIo or kInvalidArgument (too big, not a regular file/directory); messages
// name the file's role, never its path.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::spank {

struct JobOwner {
  uid_t uid = 0;
  gid_t gid = 0;
};

// While alive, this thread's filesystem accesses are checked as `owner`
// (a no-op when the process is not root, or the owner is root).
class OwnerIdentity {
 public:
  explicit OwnerIdentity(JobOwner owner);
  ~OwnerIdentity();
  OwnerIdentity(const OwnerIdentity&) = delete;
  OwnerIdentity& operator=(const OwnerIdentity&) = delete;
  // False when the switch did not take (then nothing must be read).
  bool ok() const { return ok_; }

 private:
  bool switched_ = false;
  bool ok_ = true;
  uid_t old_uid_ = 0;
  gid_t old_gid_ = 0;
};

// Opens directory `path` as `owner`; the directory must belong to the owner.
Result<UniqueFd> OpenOwnedDirectory(const std::string& path, JobOwner owner, std::string_view role);

// Reads `name` in `dir_fd` as `owner` with the safe reader
// (protocol/attempt_files.h ReadAttemptFile): a regular file of the owner, at
// most `max_bytes`. With `private_only`, group/other permission bits are
// refused (for secrets).
Result<std::string> ReadOwnedFileAt(int dir_fd, const std::string& name, JobOwner owner, size_t max_bytes,
                                    bool private_only, std::string_view role);

// The same for an absolute or relative `path` (the token file).
Result<std::string> ReadOwnedFile(const std::string& path, JobOwner owner, size_t max_bytes, bool private_only,
                                  std::string_view role);

}  // namespace scimesh::spank
