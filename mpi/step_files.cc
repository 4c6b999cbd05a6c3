// Writing a step's results in its attempt directory.
#include "mpi/step_files.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "protocol/util/atomic_file.h"
#include "protocol/util/json_io.h"
#include "protocol/wire/identifiers.h"

namespace scimesh::mpi {

Status StepFiles::WriteObject(const char* file, std::string_view json) const {
  auto doc = ParseJson(json, file);
  if (!doc.ok() || !doc->IsObject()) return Status::InvalidArgument(std::string(file) + ": not a JSON object");
  return WriteFileAtomically(dir_ + "/" + file, json, 0644, Durability::kDurable).WithContext(file);
}

Result<bool> StepFiles::WriteFailure(const FailureFile& failure) const {
  const std::string path = dir_ + "/" + kFailureFileName;
  Status s = CreateFileExclusively(AT_FDCWD, path, SerializeFailureFile(failure), 0644, Durability::kDurable);
  if (s.ok()) return true;
  if (s.code() != Code::kAlreadyExists) return s;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return Status::PermissionDenied(std::string(kFailureFileName) + " is taken by something other than a regular file");
  }
  return false;
}

Status StepFiles::AddArtifact(std::string_view name, const std::string& source,
                              std::string_view media_type) const {
  SCIMESH_RETURN_IF_ERROR(CheckArtifactName(name, "artifact name"));
  const std::string dir = dir_ + "/" + kArtifactsDirName;
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::Io(std::string("cannot create artifacts/: ") + std::strerror(errno));
  }
  const std::string dest = dir + "/" + std::string(name);
  SCIMESH_RETURN_IF_ERROR(CopyFileAtomically(source, dest, 0644, Durability::kDurable).WithContext("artifact"));
  if (!media_type.empty()) {
    const std::string sidecar = dir + "/" + MediaTypeSidecarName(name);
    SCIMESH_RETURN_IF_ERROR(
        WriteFileAtomically(sidecar, media_type, 0644, Durability::kDurable).WithContext("artifact"));
  }
  return Status::Ok();
}

}  // namespace scimesh::mpi
