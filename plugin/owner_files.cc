// Opening the job owner's files as the job owner, without following symlinks.
#include "plugin/owner_files.h"

#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "protocol/attempt/attempt_files.h"

namespace scimesh::spank {
namespace {

Status OpenError(std::string_view role, int err) {
  std::string what = std::string(role) + ": ";
  switch (err) {
    case ENOENT: return Status::NotFound(what + "does not exist");
    case ELOOP: return Status::PermissionDenied(what + "is a symbolic link (refused)");
    case EACCES:
    case EPERM: return Status::PermissionDenied(what + "not readable by the job's user");
    case ENOTDIR: return Status::InvalidArgument(what + "not a directory");
    default: return Status::Io(what + std::strerror(err));
  }
}

Status CheckOwner(const struct stat& st, JobOwner owner, std::string_view role) {
  if (st.st_uid != owner.uid) {
    return Status::PermissionDenied(std::string(role) + ": not owned by the job's user (refused)");
  }
  return Status::Ok();
}

}  // namespace

OwnerIdentity::OwnerIdentity(JobOwner owner) {
  if (::geteuid() != 0 || owner.uid == 0) return;
  // setfsgid first: once fsuid is not root, changing fsgid is no longer allowed.
  old_gid_ = static_cast<gid_t>(::setfsgid(owner.gid));
  old_uid_ = static_cast<uid_t>(::setfsuid(owner.uid));
  switched_ = true;
  // setfs*id report no error; asking again returns the current value.
  ok_ = static_cast<uid_t>(::setfsuid(static_cast<uid_t>(-1))) == owner.uid &&
        static_cast<gid_t>(::setfsgid(static_cast<gid_t>(-1))) == owner.gid;
}

OwnerIdentity::~OwnerIdentity() {
  if (!switched_) return;
  ::setfsuid(old_uid_);
  ::setfsgid(old_gid_);
}

Result<UniqueFd> OpenOwnedDirectory(const std::string& path, JobOwner owner, std::string_view role) {
  OwnerIdentity as_owner(owner);
  if (!as_owner.ok()) return Status::PermissionDenied(std::string(role) + ": cannot take the job user's identity");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return OpenError(role, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return OpenError(role, errno);
  SCIMESH_RETURN_IF_ERROR(CheckOwner(st, owner, role));
  return fd;
}

Result<std::string> ReadOwnedFileAt(int dir_fd, const std::string& name, JobOwner owner, size_t max_bytes,
                                    bool private_only, std::string_view role) {
  OwnerIdentity as_owner(owner);
  if (!as_owner.ok()) return Status::PermissionDenied(std::string(role) + ": cannot take the job user's identity");
  return ReadAttemptFile(dir_fd, name, owner.uid, max_bytes, ReadRules{private_only, role});
}

Result<std::string> ReadOwnedFile(const std::string& path, JobOwner owner, size_t max_bytes, bool private_only,
                                  std::string_view role) {
  return ReadOwnedFileAt(AT_FDCWD, path, owner, max_bytes, private_only, role);
}

}  // namespace scimesh::spank
