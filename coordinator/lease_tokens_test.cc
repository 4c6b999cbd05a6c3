// LeaseTokens: a token names one lease and attempt, and nothing else verifies.
#include "coordinator/lease_tokens.h"

#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace scimesh::coordinator {
namespace {

const std::string kSecret(64, 'a');

TEST(LeaseTokens, ATokenVerifiesAsItsLeaseAndAttempt) {
  LeaseTokens tokens(kSecret);
  const std::string t = tokens.Issue("l_0c8e51d2a4b94f17", 3);
  EXPECT_TRUE(LeaseTokens::LooksLikeOne(t));
  auto grant = tokens.Verify(t);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->lease_id, "l_0c8e51d2a4b94f17");
  EXPECT_EQ(grant->attempt, 3);
}

TEST(LeaseTokens, AnythingElseDoesNotVerify) {
  LeaseTokens tokens(kSecret);
  const std::string t = tokens.Issue("l_0c8e51d2a4b94f17", 1);
  EXPECT_FALSE(LeaseTokens(std::string(64, 'b')).Verify(t)) << "another coordinator's";
  std::string other_lease = t;
  other_lease.replace(3, 18, "l_0c8e51d2a4b94f18");
  EXPECT_FALSE(tokens.Verify(other_lease));
  std::string other_attempt = t;
  other_attempt.replace(t.find("_1_"), 3, "_2_");
  EXPECT_FALSE(tokens.Verify(other_attempt));
  std::string flipped = t;
  flipped.back() = flipped.back() == 'f' ? 'e' : 'f';
  EXPECT_FALSE(tokens.Verify(flipped));
  for (const char* bad : {"", "lt_", "lt_l_0c8e51d2a4b94f17_1_", "lt_x_1_00", "smk_key", "lt_l_0c8e51d2a4b94f17_0_ab"}) {
    EXPECT_FALSE(tokens.Verify(bad)) << bad;
  }
}

TEST(LeaseTokens, TheSecretIsCreatedPrivateAndKeptAcrossOpens) {
  TestDir dir;
  const std::string path = dir.path() + "/c.db.lease-secret";
  auto first = LeaseTokens::Open(path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LeaseTokens::Open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->Verify(first->Issue("l_0c8e51d2a4b94f17", 1))) << "a restart keeps tokens valid";
}

TEST(LeaseTokens, ASecretOthersCanReadIsRefused) {
  TestDir dir;
  const std::string path = dir.path() + "/secret";
  std::ofstream(path) << std::string(64, 'c') << "\n";
  ::chmod(path.c_str(), 0644);
  auto opened = LeaseTokens::Open(path);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("chmod 600"), std::string::npos) << opened.status().ToString();
  ::chmod(path.c_str(), 0600);
  EXPECT_TRUE(LeaseTokens::Open(path).ok());
  std::ofstream(path) << "short\n";
  EXPECT_FALSE(LeaseTokens::Open(path).ok());
}

}  // namespace
}  // namespace scimesh::coordinator
