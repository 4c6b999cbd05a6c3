// Packing directory artifacts before upload, unpacking directory inputs.
#include "launcher/step/directory_artifacts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/attempt/attempt_dir.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::launcher {
namespace {

// One path component from the wire or a directory listing: never a path.
bool IsComponent(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace

Status PackDirectoryArtifact(int dir_fd, const std::string& name, const ArchiveLimits& limits) {
  const std::string what = "artifact " + name + ": ";
  if (!IsComponent(name)) return Status::InvalidArgument(what + "not a plain name");
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd artifacts, OpenDirectoryAt(dir_fd, kArtifactsDirName, false));
  struct stat st {};
  if (::fstatat(artifacts.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(what + "the directory media type is only for directories");
  }
  const std::string tree = "." + name + ".dir";
  if (::renameat(artifacts.get(), name.c_str(), artifacts.get(), tree.c_str()) != 0) {
    return Status::Io(what + "cannot move the directory aside to pack it");
  }
  UniqueFd tree_fd(::openat(artifacts.get(), tree.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  UniqueFd out(::openat(artifacts.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!tree_fd.valid() || !out.valid()) return Status::Io(what + "cannot open the directory or its archive");
  if (Status s = PackDirectory(tree_fd.get(), out.get(), limits); !s.ok()) {
    return Status::InvalidArgument(what + s.message());
  }
  return Status::Ok();
}

Status UnpackDirectoryInputs(int dir_fd, const std::vector<InputArtifact>& inputs, const ArchiveLimits& limits) {
  for (const auto& a : inputs) {
    if (a.media_type != kDirectoryArtifactMediaType) continue;
    const std::string what = "input artifact " + a.step_id + "/" + a.name + ": ";
    if (!IsComponent(a.step_id) || !IsComponent(a.name)) return Status::InvalidArgument(what + "not a plain name");
    SCIMESH_ASSIGN_OR_RETURN(UniqueFd inputs_fd, OpenDirectoryAt(dir_fd, "inputs", false));
    SCIMESH_ASSIGN_OR_RETURN(UniqueFd step_fd, OpenDirectoryAt(inputs_fd.get(), a.step_id, false));
    UniqueFd archive(::openat(step_fd.get(), a.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!archive.valid()) return Status::Io(what + "the downloaded archive cannot be opened");
    const std::string temp = "." + a.name + ".unpack";
    SCIMESH_ASSIGN_OR_RETURN(UniqueFd dest, OpenDirectoryAt(step_fd.get(), temp, true));
    if (Status s = UnpackArchive(archive.get(), dest.get(), limits); !s.ok()) {
      return Status::InvalidArgument(what + "refused: " + s.message());
    }
    // The archive's name becomes the directory's.
    if (::unlinkat(step_fd.get(), a.name.c_str(), 0) != 0 ||
        ::renameat(step_fd.get(), temp.c_str(), step_fd.get(), a.name.c_str()) != 0) {
      return Status::Io(what + "cannot put the unpacked directory in place");
    }
  }
  return Status::Ok();
}

}  // namespace scimesh::launcher
