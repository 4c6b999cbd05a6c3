// Integration: `scimesh-coordinator run` reads its key by the client's rules
// (protocol/token.h): a token file others can read is refused, and neither
// the secret nor the file's path is printed.
#include <sys/stat.h>

#include <fstream>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

using RunToken = CoordinatorTest;

TEST_F(RunToken, ATokenFileReadableByOthersIsRefused) {
  const std::string file = process_->dir() + "/shared.token";
  std::ofstream(file) << process_->token("exec") << "\n";
  ASSERT_EQ(::chmod(file.c_str(), 0644), 0);
  std::string out;
  const int rc = process_->RunCli({"run", "show", "r_0123456789abcdef"},
                                  {{"SCIMESH_URL", process_->url()}, {"SCIMESH_TOKEN_FILE", file}}, &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_EQ(out.find(process_->token("exec")), std::string::npos);
  // The same file made private is accepted: the run is simply not there.
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  EXPECT_EQ(process_->RunCli({"run", "show", "r_0123456789abcdef"},
                             {{"SCIMESH_URL", process_->url()}, {"SCIMESH_TOKEN_FILE", file}}, &out),
            1);
}

}  // namespace
}  // namespace scimesh::coordinator::testing
