// Integration: `scimesh-coordinator run` follows the client's rules for its
// key (protocol/token.h: a token file others can read is refused, the secret
// is never printed) and its transport (protocol/url.h: plain http only to
// loopback unless SCIMESH_ALLOW_INSECURE_HTTP=1).
#include <sys/stat.h>

#include <fstream>
#include <map>

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

TEST_F(RunToken, PlainHttpToAnotherHostIsRefusedWithoutConsent) {
  std::string out;
  // 192.0.2.1 (TEST-NET-1) is never reached: refused before any connection.
  const std::map<std::string, std::string> env = {{"SCIMESH_URL", "http://192.0.2.1:8470"},
                                                  {"SCIMESH_TOKEN_FILE", process_->token_file("exec")}};
  EXPECT_EQ(process_->RunCli({"run", "show", "r_0123456789abcdef"}, env, &out), 2);
  auto consent = env;
  consent["SCIMESH_ALLOW_INSECURE_HTTP"] = "1";
  EXPECT_EQ(process_->RunCli({"run", "show", "r_0123456789abcdef"}, consent, &out), 3) << "tried, unreachable";
}

}  // namespace
}  // namespace scimesh::coordinator::testing
