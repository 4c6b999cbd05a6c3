// Reading a step's results safely from its attempt directory.
#include "launcher/step/step_results.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <regex>

#include "launcher/step/directory_archive.h"
#include "protocol/attempt/attempt_dir.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/attempt/step_output.h"

namespace scimesh::launcher {
namespace {

// A file the step may or may not have written: absent is fine, refused is not.
Result<std::optional<std::string>> ReadOptional(int dir_fd, const char* name, uid_t owner, size_t max_bytes) {
  auto text = ReadAttemptFile(dir_fd, name, owner, max_bytes);
  if (text.ok()) return std::optional<std::string>(std::move(*text));
  if (text.status().code() == Code::kNotFound) return std::optional<std::string>();
  return text.status();
}

Status ReadUsage(int dir_fd, uid_t owner, std::map<std::string, double>* usage) {
  auto doc = ReadAttemptJson(dir_fd, kUsageFileName, owner, kMaxResultFileBytes);
  if (!doc.ok()) return doc.status().code() == Code::kNotFound ? Status::Ok() : doc.status();
  if (!doc->IsObject()) return Status::InvalidArgument(std::string(kUsageFileName) + ": not a JSON object");
  for (const auto& kv : doc->GetObject()) {
    if (kv.value.IsNumber()) (*usage)[std::string(kv.name.GetString(), kv.name.GetStringLength())] = kv.value.GetDouble();
  }
  return Status::Ok();
}

// Every regular, non-hidden file in artifacts/, with the media type a
// scimesh_step_add_artifact sidecar gives (else octet-stream), and every
// non-hidden directory, as a directory artifact.
Status ReadArtifacts(int dir_fd, uid_t owner, StepResults* out) {
  auto dir = OpenDirectoryAt(dir_fd, kArtifactsDirName, false);
  if (!dir.ok()) return dir.status().code() == Code::kIo ? Status::Ok() : dir.status();  // none
  // fdopendir owns the descriptor it is given: hand it a duplicate.
  DIR* d = ::fdopendir(::fcntl(dir->get(), F_DUPFD_CLOEXEC, 0));
  if (d == nullptr) return Status::Ok();
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    struct stat st {};
    if (::fstatat(dir->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      out->artifacts.emplace_back(name, kDirectoryArtifactMediaType);
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    auto media = ReadAttemptFile(dir->get(), MediaTypeSidecarName(name), owner, kMaxSidecarFileBytes);
    out->artifacts.emplace_back(name, media.ok() ? *media : "application/octet-stream");
  }
  return Status::Ok();
}

}  // namespace

Result<StepResults> ReadStepResults(int dir_fd, uid_t owner) {
  StepResults r;
  SCIMESH_ASSIGN_OR_RETURN(r.state_patch, ReadOptional(dir_fd, kStatePatchFileName, owner, kMaxResultFileBytes));
  SCIMESH_RETURN_IF_ERROR(ReadUsage(dir_fd, owner, &r.usage));
  SCIMESH_RETURN_IF_ERROR(ReadArtifacts(dir_fd, owner, &r));
  SCIMESH_ASSIGN_OR_RETURN(r.output, ReadOptional(dir_fd, kOutputFileName, owner, kMaxOutputBytes));
  return r;
}

Result<std::optional<FailureFile>> ReadStepFailure(int dir_fd, uid_t owner) {
  SCIMESH_ASSIGN_OR_RETURN(auto text, ReadOptional(dir_fd, kFailureFileName, owner, kMaxFailureFileBytes));
  if (!text) return std::optional<FailureFile>();
  SCIMESH_ASSIGN_OR_RETURN(FailureFile f, ParseFailureFile(*text));
  return std::optional<FailureFile>(std::move(f));
}

bool SrunFoundAllocationEnding(const std::string& step_err) {
  // srun's words for a job that is ending or gone, the same from 22.05 to
  // 26.05 (scripts/test --slurm-matrix): "Unable to create step for job N:
  // ...", "Slurm job N has expired", and for a job slurmctld no longer knows
  // "Unable to confirm allocation for job N: Invalid job id specified" (seen
  // on 22.05 and 25.11).
  static const std::regex refused(
      R"(srun: error: (Unable to create step for job [0-9]+: (Job/step already completing or completed|)"
      R"(Job has expired|Invalid job id specified)|Slurm job [0-9]+ has expired|)"
      R"(Unable to confirm allocation for job [0-9]+: (Invalid job id specified|Job has expired)))");
  return std::regex_search(step_err, refused);
}

}  // namespace scimesh::launcher
