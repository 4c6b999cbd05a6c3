// What a build is: the project version, the git commit and the SLURM release,
// as every program's --version prints them and the SPANK plugin logs at load.
//
// One source for all three: the VERSION of the top CMakeLists.txt, the commit
// written at each build by cmake/version_commit.cmake, and the SLURM release
// whose headers cmake/dependencies.cmake found. Thread-safe; nothing fails.
#pragma once

#include <string>
#include <string_view>

namespace scimesh {

struct BuildIdentity {
  std::string_view version;  // the project's, e.g. "0.1.0"
  std::string_view commit;   // git's short hash, e.g. "8699517"; "unknown" outside a git work tree
  std::string_view slurm;    // the SLURM release built for, e.g. "22.05.8"; "none" without SLURM
};

// This build's identity; the views point at static storage.
BuildIdentity ThisBuild();

// "PROGRAM VERSION (commit COMMIT, SLURM RELEASE)": the one line of
// `PROGRAM --version`. An empty commit reads "unknown", an empty release "none".
std::string VersionLine(std::string_view program, const BuildIdentity& build = ThisBuild());

}  // namespace scimesh
