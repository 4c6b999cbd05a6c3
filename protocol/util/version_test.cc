// The --version line's shape, and what this build says it is.
#include "protocol/util/version.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace scimesh {
namespace {

TEST(Version, LineNamesProgramVersionCommitAndSlurm) {
  EXPECT_EQ(VersionLine("scimesh-launch", {"0.1.0", "8699517", "22.05.8"}),
            "scimesh-launch 0.1.0 (commit 8699517, SLURM 22.05.8)");
}

TEST(Version, LineSaysUnknownCommitAndNoSlurmWhenTheBuildHadNone) {
  EXPECT_EQ(VersionLine("scimesh-rank", {"1.2.3", "", ""}), "scimesh-rank 1.2.3 (commit unknown, SLURM none)");
}

TEST(Version, ThisBuildIsTheProjectsVersionACommitAndARelease) {
  const BuildIdentity build = ThisBuild();
  EXPECT_EQ(std::string(build.version), SCIMESH_EXPECTED_PROJECT_VERSION);
  EXPECT_TRUE(std::regex_match(std::string(build.commit), std::regex("[0-9a-f]{7,40}|unknown"))) << build.commit;
  // This tree is built with SLURM's headers (cmake/dependencies.cmake requires them).
  EXPECT_TRUE(std::regex_match(std::string(build.slurm), std::regex("[0-9]+\\.[0-9]{2}\\.[0-9]+"))) << build.slurm;
}

TEST(Version, DefaultLineIsThisBuilds) {
  const BuildIdentity build = ThisBuild();
  EXPECT_EQ(VersionLine("scimesh-agent"), VersionLine("scimesh-agent", build));
  EXPECT_EQ(VersionLine("scimesh-agent").rfind("scimesh-agent " + std::string(build.version) + " (commit ", 0), 0u);
}

}  // namespace
}  // namespace scimesh
