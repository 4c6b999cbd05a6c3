// Reading the user's files as the user: owner checks, symlinks, fs identity.
#include "plugin/owner_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace scimesh::spank {
namespace {

constexpr uid_t kNobody = 65534;

JobOwner Me() { return {::getuid(), ::getgid()}; }

TEST(OwnerFiles, ReadsTheOwnersFile) {
  TestDir d;
  TestDir::Write(d / "lease.state", "{}");
  auto dir = OpenOwnedDirectory(d.path(), Me(), "attempt directory");
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  auto text = ReadOwnedFileAt(dir->get(), "lease.state", Me(), 100, false, "lease.state");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text.value(), "{}");
}

TEST(OwnerFiles, RefusesSymlinksWithoutNamingThePath) {
  TestDir d;
  TestDir::Write(d / "real", "secret");
  ASSERT_EQ(::symlink((d / "real").c_str(), (d / "lease.state").c_str()), 0);
  ASSERT_EQ(::symlink(d.path().c_str(), (d / "dirlink").c_str()), 0);
  auto dir = OpenOwnedDirectory(d.path(), Me(), "attempt directory");
  ASSERT_TRUE(dir.ok());
  auto text = ReadOwnedFileAt(dir->get(), "lease.state", Me(), 100, false, "lease.state");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(text.status().message().find(d.path()), std::string::npos);
  EXPECT_FALSE(OpenOwnedDirectory(d / "dirlink", Me(), "attempt directory").ok());
}

TEST(OwnerFiles, RefusesSizeTypeAndLooseSecrets) {
  TestDir d;
  TestDir::Write(d / "big", std::string(200, 'x'));
  TestDir::Write(d / "token", "abc");
  ASSERT_EQ(::chmod((d / "token").c_str(), 0644), 0);
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(ReadOwnedFile(d / "big", Me(), 100, false, "f").ok());
  EXPECT_FALSE(ReadOwnedFile(d / "token", Me(), 100, true, "token").ok());
  EXPECT_TRUE(ReadOwnedFile(d / "token", Me(), 100, false, "token").ok());
  EXPECT_FALSE(ReadOwnedFile(d / "fifo", Me(), 100, false, "f").ok());  // and does not hang
  EXPECT_FALSE(ReadOwnedFile(d / "missing", Me(), 100, false, "f").ok());
}

TEST(OwnerFiles, RefusesAFileOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  TestDir d;
  TestDir::Write(d / "lease.json", "{}");
  ASSERT_EQ(::chown((d / "lease.json").c_str(), kNobody, kNobody), 0);
  // Root's own file is not the job owner's (nobody's) file either way.
  auto r = ReadOwnedFile(d / "lease.json", Me(), 100, false, "lease.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kPermissionDenied);
  EXPECT_NE(r.status().message().find("lease.json: owned by uid 65534"), std::string::npos) << r.status().message();
}

TEST(OwnerFiles, ReadsWithTheOwnersPermissionsNotRoots) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch identity";
  TestDir d;
  ASSERT_EQ(::chmod(d.path().c_str(), 0700), 0);  // root's: nobody may not enter
  TestDir::Write(d / "token", "abc");
  ASSERT_EQ(::chown((d / "token").c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chmod((d / "token").c_str(), 0600), 0);
  JobOwner nobody{kNobody, kNobody};
  auto r = ReadOwnedFile(d / "token", nobody, 100, true, "token");
  ASSERT_FALSE(r.ok()) << "read through a directory only root may enter";
  EXPECT_EQ(r.status().code(), Code::kPermissionDenied);
  ASSERT_EQ(::chmod(d.path().c_str(), 0711), 0);
  auto ok = ReadOwnedFile(d / "token", nobody, 100, true, "token");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok.value(), "abc");
  // The identity is restored afterwards: root reads its own directory again.
  EXPECT_TRUE(OpenOwnedDirectory(d.path(), Me(), "d").ok());
}

}  // namespace
}  // namespace scimesh::spank
