// This build's identity and the --version line (protocol/util/version.h).
#include "protocol/util/version.h"

namespace scimesh {
namespace version::internal {
// The generated source of cmake/version_commit.cmake: the only part of the
// identity that changes without a configure step.
extern const char kBuildCommit[];
}  // namespace version::internal

BuildIdentity ThisBuild() {
  // SCIMESH_PROJECT_VERSION and SCIMESH_SLURM_RELEASE come from the configure
  // step (protocol/CMakeLists.txt).
  return {SCIMESH_PROJECT_VERSION, version::internal::kBuildCommit, SCIMESH_SLURM_RELEASE};
}

std::string VersionLine(std::string_view program, const BuildIdentity& build) {
  std::string line(program);
  line += ' ';
  line += build.version;
  line += " (commit ";
  line += build.commit.empty() ? "unknown" : build.commit;
  line += ", SLURM ";
  line += build.slurm.empty() ? "none" : build.slurm;
  line += ')';
  return line;
}

}  // namespace scimesh
