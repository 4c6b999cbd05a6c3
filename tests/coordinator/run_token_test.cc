// Integration: `scimesh-coordinator run` follows the client's rules for its
// key (protocol/token.h: a token file others can read is refused, the secret
// is never printed) and its transport (protocol/url.h: plain http only to
// loopback unless SCIMESH_ALLOW_INSECURE_HTTP=1), through the client's own
// code; and its errors say what, where (the URL) and why, once (#18 item 5).
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

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

// What `run` wrote to stderr (the fixture appends it to cli.log): the command
// runs after the log is emptied.
int RunCliErr(const CoordinatorProcess& p, const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env, std::string* err) {
  const std::string log = p.dir() + "/cli.log";
  std::ofstream(log, std::ios::trunc).flush();
  std::string out;
  const int rc = p.RunCli(args, env, &out);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  *err = ss.str();
  return rc;
}

// Occurrences of `needle` in `text`.
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(RunToken, AnUnreachableCoordinatorIsNamedWithCurlsReasonOnce) {
  std::string out;
  const std::map<std::string, std::string> env = {{"SCIMESH_URL", "http://127.0.0.1:1"},
                                                  {"SCIMESH_TOKEN_FILE", process_->token_file("exec")}};
  EXPECT_EQ(RunCliErr(*process_, {"run", "show", "r_0123456789abcdef"}, env, &out), 3) << out;
  EXPECT_EQ(Count(out, "\n"), 1u) << "one line, not one per retry: " << out;
  EXPECT_EQ(Count(out, "http://127.0.0.1:1"), 1u) << out;
  EXPECT_EQ(Count(out, "show run"), 1u) << out;
  EXPECT_NE(out.find("Couldn't connect to server"), std::string::npos) << "curl's reason: " << out;
  EXPECT_EQ(out.find("scimesh-coordinator run show: "), 0u) << out;
}

TEST_F(RunToken, ARefusalSaysTheCoordinatorsAnswerOnce) {
  std::string out;
  const std::map<std::string, std::string> env = {{"SCIMESH_URL", process_->url()},
                                                  {"SCIMESH_TOKEN_FILE", process_->token_file("exec")}};
  EXPECT_EQ(RunCliErr(*process_, {"run", "show", "r_0123456789abcdef"}, env, &out), 1) << out;
  EXPECT_EQ(Count(out, "\n"), 1u) << out;
  EXPECT_EQ(Count(out, process_->url()), 1u) << out;
  EXPECT_EQ(Count(out, " 404 "), 1u) << out;  // spaced: the port may hold "404"
  EXPECT_EQ(Count(out, "not_found"), 1u) << out;
}

}  // namespace
}  // namespace scimesh::coordinator::testing
