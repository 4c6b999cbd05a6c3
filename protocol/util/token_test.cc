// Loading the token: a 0600 file or the environment, validated.
#include "protocol/util/token.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "protocol/util/log.h"
#include "tests/support/test_dir.h"

namespace scimesh {
namespace {

class TokenTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("SCIMESH_TOKEN_FILE");
    ::unsetenv("SCIMESH_TOKEN");
  }
  std::string WriteTokenFile(const std::string& content, mode_t mode) {
    const std::string p = dir_ / "token";
    TestDir::Write(p, content);
    ::chmod(p.c_str(), mode);
    return p;
  }
  TestDir dir_;
};

TEST_F(TokenTest, ReadsA0600FileAndTrimsIt) {
  auto t = LoadTokenFile(WriteTokenFile("  abc.DEF-123\n", 0600));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->secret(), "abc.DEF-123");
}

TEST_F(TokenTest, RefusesAFileOthersCanReadNamingThePathAndTheMode) {
  for (mode_t mode : {0644, 0640, 0604, 0660}) {
    const std::string path = WriteTokenFile("abc", mode);
    auto t = LoadTokenFile(path);
    ASSERT_FALSE(t.ok()) << std::oct << mode;
    EXPECT_EQ(t.status().code(), Code::kPermissionDenied);
    char octal[8];
    (void)std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode));
    EXPECT_EQ(t.status().message(), "the token file " + path + " (SCIMESH_TOKEN_FILE) is accessible by group or others (mode " +
                                        octal + "); chmod 600 it");
  }
}

TEST_F(TokenTest, AMissingFileIsNamedWithTheSystemsReason) {
  const std::string path = dir_ / "missing";
  auto t = LoadTokenFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kNotFound);
  EXPECT_EQ(t.status().message(), "cannot open the token file " + path + " (SCIMESH_TOKEN_FILE): No such file or directory");
}

TEST_F(TokenTest, AnUnreadableFileIsNamedWithTheSystemsReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a 0000 file";
  const std::string path = WriteTokenFile("abc", 0000);
  auto t = LoadTokenFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(t.status().message(), "cannot open the token file " + path + " (SCIMESH_TOKEN_FILE): Permission denied");
}

TEST_F(TokenTest, ADirectoryIsNotATokenFile) {
  auto t = LoadTokenFile(dir_.path());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "the token file " + dir_.path() + " (SCIMESH_TOKEN_FILE) is not a regular file");
}

TEST_F(TokenTest, RefusesEmptyMultiWordAndControlCharacters) {
  EXPECT_FALSE(LoadTokenFile(WriteTokenFile("\n\n", 0600)).ok());
  EXPECT_FALSE(LoadTokenFile(WriteTokenFile("abc def", 0600)).ok());
  EXPECT_FALSE(LoadTokenFile(WriteTokenFile("abc\r\nX-Injected: 1", 0600)).ok());
  EXPECT_FALSE(LoadTokenFile(dir_ / "missing").ok());
}

TEST_F(TokenTest, NoTokenAtAllSaysWhatToSetOnce) {
  ::unsetenv("SCIMESH_TOKEN_FILE");
  ::unsetenv("SCIMESH_TOKEN");
  auto t = LoadTokenFromEnvironment();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "no token: set SCIMESH_TOKEN_FILE (a chmod 600 file) or SCIMESH_TOKEN");
}

TEST_F(TokenTest, EnvironmentPrefersTheFile) {
  ::setenv("SCIMESH_TOKEN", "from-env", 1);
  EXPECT_EQ(LoadTokenFromEnvironment()->secret(), "from-env");
  ::setenv("SCIMESH_TOKEN_FILE", WriteTokenFile("from-file", 0600).c_str(), 1);
  EXPECT_EQ(LoadTokenFromEnvironment()->secret(), "from-file");
  ::unsetenv("SCIMESH_TOKEN_FILE");
  ::unsetenv("SCIMESH_TOKEN");
  EXPECT_EQ(LoadTokenFromEnvironment().status().code(), Code::kNotFound);
}

TEST_F(TokenTest, ALoadedTokenIsRedactedFromLogs) {
  auto t = LoadTokenFile(WriteTokenFile("tok-loaded-6b1e", 0600));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(log::Redact("key tok-loaded-6b1e was refused"), "key [redacted] was refused");
}

TEST(KeyHolder, TheKeysVariablesAreKnownByName) {
  EXPECT_TRUE(IsTokenVariable("SCIMESH_TOKEN=abc"));
  EXPECT_TRUE(IsTokenVariable("SCIMESH_TOKEN_FILE=/x"));
  EXPECT_TRUE(IsTokenVariable("SCIMESH_TOKEN"));
  EXPECT_FALSE(IsTokenVariable("SCIMESH_TOKENS=1"));
  EXPECT_FALSE(IsTokenVariable("SCIMESH_URL=http://x"));
}

TEST(KeyHolder, AProcessHoldingTheKeyIsNotDumpable) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::prctl(PR_GET_DUMPABLE) != 1) ::_exit(2);
    if (!ProtectKeyHolder().ok()) ::_exit(3);
    ::_exit(::prctl(PR_GET_DUMPABLE) == 0 ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace scimesh
