// The attempt directory: created level by level with openat(O_NOFOLLOW).
#include "protocol/attempt/attempt_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "protocol/attempt/attempt_files.h"
#include "protocol/util/atomic_file.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"

namespace scimesh {
namespace {

std::string TempName(std::string_view name) { return "." + std::string(name) + ".part"; }

}  // namespace

Result<UniqueFd> OpenDirectoryAt(int parent_fd, std::string_view name, bool create) {
  const std::string n(name);
  if (n.empty() || n.find('/') != std::string::npos || n == "." || n == "..") {
    return Status::InvalidArgument("'" + n + "' is not one path component");
  }
  if (create && ::mkdirat(parent_fd, n.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Io("cannot create directory " + n + ": " + std::strerror(errno));
  }
  int fd = ::openat(parent_fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return Status::PermissionDenied(n + " is a symlink or not a directory; refusing to follow it");
    }
    return Status::Io("cannot open directory " + n + ": " + std::strerror(errno));
  }
  return UniqueFd(fd);
}

Result<AttemptDir> AttemptDir::Open(const std::string& spool, const Lease& lease) {
  SCIMESH_RETURN_IF_ERROR(CheckRunId(lease.run_id, "run_id"));
  SCIMESH_RETURN_IF_ERROR(CheckIdentifier(lease.step_id, "step_id"));
  if (lease.attempt < 1) return Status::InvalidArgument("attempt must be >= 1");
  // Every level is this user's alone: another user who could write in one
  // could plant lease.json or lease.state, or replace the attempt directory.
  const uid_t me = ::geteuid();
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd spool_fd, OpenPrivateDirectory(spool, me, "spool directory"));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd run, OpenDirectoryAt(spool_fd.get(), lease.run_id, true));
  SCIMESH_RETURN_IF_ERROR(CheckPrivateDirectory(run.get(), me, "run directory " + lease.run_id));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd step, OpenDirectoryAt(run.get(), lease.step_id, true));
  SCIMESH_RETURN_IF_ERROR(CheckPrivateDirectory(step.get(), me, "step directory " + lease.run_id + "/" + lease.step_id));
  const std::string attempt = std::to_string(lease.attempt);
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd dir, OpenDirectoryAt(step.get(), attempt, true));
  SCIMESH_RETURN_IF_ERROR(CheckPrivateDirectory(dir.get(), me, "attempt directory " + lease.run_id + "/" +
                                                                   lease.step_id + "/" + attempt));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd inputs, OpenDirectoryAt(dir.get(), "inputs", true));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd artifacts, OpenDirectoryAt(dir.get(), "artifacts", true));
  std::string path = spool;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  path += "/" + lease.run_id + "/" + lease.step_id + "/" + attempt;
  return AttemptDir(std::move(path), std::move(dir));
}

std::string AttemptDir::state_path() const { return path_ + "/" + kLeaseStateFileName; }

std::string AttemptDir::InputPath(std::string_view step_id, std::string_view name) const {
  return path_ + "/inputs/" + std::string(step_id) + "/" + std::string(name);
}

Status AttemptDir::WriteLeaseJson(const Lease& lease, std::string_view coordinator_url) const {
  return WriteFileAtomically(fd_.get(), kLeaseFileName, SerializeLease(lease, coordinator_url), 0600);
}

Result<UniqueFd> AttemptDir::OpenSubdir(std::string_view name, bool create) const {
  return OpenDirectoryAt(fd_.get(), name, create);
}

Result<UniqueFd> AttemptDir::CreateInputTemp(std::string_view step_id, std::string_view name) const {
  SCIMESH_RETURN_IF_ERROR(CheckIdentifier(step_id, "input_artifacts[].step_id"));
  SCIMESH_RETURN_IF_ERROR(CheckArtifactName(name, "input_artifacts[].name"));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd inputs, OpenSubdir("inputs", true));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd step, OpenDirectoryAt(inputs.get(), step_id, true));
  const std::string temp = TempName(name);
  ::unlinkat(step.get(), temp.c_str(), 0);  // a leftover from an earlier try
  int fd = ::openat(step.get(), temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Io("cannot create input " + std::string(name) + ": " + std::strerror(errno));
  return UniqueFd(fd);
}

Status AttemptDir::CommitInput(std::string_view step_id, std::string_view name) const {
  SCIMESH_RETURN_IF_ERROR(CheckIdentifier(step_id, "input_artifacts[].step_id"));
  SCIMESH_RETURN_IF_ERROR(CheckArtifactName(name, "input_artifacts[].name"));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd inputs, OpenSubdir("inputs", false));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd step, OpenDirectoryAt(inputs.get(), step_id, false));
  const std::string n(name);
  if (::renameat(step.get(), TempName(name).c_str(), step.get(), n.c_str()) != 0) {
    return Status::Io("cannot move input " + n + " into place: " + std::strerror(errno));
  }
  return Status::Ok();
}

void AttemptDir::DiscardInput(std::string_view step_id, std::string_view name) const {
  if (!CheckIdentifier(step_id, "").ok() || !CheckArtifactName(name, "").ok()) return;
  auto inputs = OpenSubdir("inputs", false);
  if (!inputs.ok()) return;
  auto step = OpenDirectoryAt(inputs->get(), step_id, false);
  if (!step.ok()) return;
  ::unlinkat(step->get(), TempName(name).c_str(), 0);
}

Result<UniqueFd> AttemptDir::CreateArtifact(std::string_view name) const {
  SCIMESH_RETURN_IF_ERROR(CheckArtifactName(name, "artifact name"));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd dir, OpenSubdir("artifacts", true));
  const std::string n(name);
  int fd = ::openat(dir.get(), n.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Io("cannot create artifact " + n + ": " + std::strerror(errno));
  return UniqueFd(fd);
}

Result<UniqueFd> AttemptDir::OpenArtifact(std::string_view name) const {
  SCIMESH_RETURN_IF_ERROR(CheckArtifactName(name, "artifact name"));
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd dir, OpenSubdir("artifacts", false));
  const std::string n(name);
  // O_NONBLOCK: opening a FIFO planted under that name must not hang.
  int fd = ::openat(dir.get(), n.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) return Status::PermissionDenied("artifact " + n + " is a symlink; refusing it");
    return Status::NotFound("artifact " + n + ": " + std::strerror(errno));
  }
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::PermissionDenied("artifact " + n + " is not a regular file");
  }
  return owned;
}

}  // namespace scimesh
