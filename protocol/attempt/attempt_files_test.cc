// The safe reader and the attempt directory's typed files, attacked the way a
// step's code or another user could: symlinks, FIFOs, other owners, huge or
// deeply nested files, a lease.json naming another coordinator.
#include "protocol/attempt/attempt_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "protocol/attempt/lease_file.h"
#include "protocol/attempt/lease_state.h"  // ReadLeaseStateAt: the FIFO case
#include "protocol/attempt/placement_file.h"
#include "protocol/wire/wire_json.h"
#include "tests/support/test_dir.h"
#include "tests/support/test_lease.h"

namespace scimesh {
namespace {

constexpr uid_t kNobody = 65534;

class AttemptFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fd = OpenPrivateDirectory(dir_.path(), ::geteuid(), "attempt directory");
    ASSERT_TRUE(fd.ok()) << fd.status().message();
    fd_ = std::move(*fd);
  }
  Result<std::string> Read(const char* name, size_t max = 1 << 20) {
    return ReadAttemptFile(fd_.get(), name, ::geteuid(), max);
  }
  TestDir dir_;
  UniqueFd fd_;
};

TEST_F(AttemptFilesTest, ReadsARegularFileOfTheOwner) {
  TestDir::Write(dir_ / "output.json", R"({"x":1})");
  auto r = Read(kOutputFileName);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, R"({"x":1})");
  EXPECT_EQ(Read(kUsageFileName).status().code(), Code::kNotFound);
}

TEST_F(AttemptFilesTest, RefusesSymlinksNamingTheFileNotThePath) {
  TestDir::Write(dir_ / "elsewhere", "{}");
  for (const char* name : {kLeaseFileName, kLeaseStateFileName, kPlacementFileName, kOutputFileName, kUsageFileName}) {
    ASSERT_EQ(::symlink((dir_ / "elsewhere").c_str(), (dir_ / name).c_str()), 0);
    auto r = Read(name);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), Code::kPermissionDenied) << name;
    EXPECT_NE(r.status().message().find(name), std::string::npos);
    EXPECT_EQ(r.status().message().find(dir_.path()), std::string::npos);
  }
}

TEST_F(AttemptFilesTest, AFifoIsRefusedAtOnceNotWaitedOn) {
  ASSERT_EQ(::mkfifo((dir_ / kLeaseStateFileName).c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((dir_ / kOutputFileName).c_str(), 0600), 0);
  // Without O_NONBLOCK the open itself would block forever (no writer).
  EXPECT_EQ(Read(kLeaseStateFileName).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Read(kOutputFileName).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ReadLeaseStateAt(fd_.get(), ::geteuid()).status().code(), Code::kInvalidArgument);
}

TEST_F(AttemptFilesTest, AFileOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  TestDir::Write(dir_ / kLeaseFileName, "{}");
  ASSERT_EQ(::chown((dir_ / kLeaseFileName).c_str(), kNobody, kNobody), 0);
  auto r = Read(kLeaseFileName);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kPermissionDenied);
  EXPECT_NE(r.status().message().find("owned by uid 65534"), std::string::npos);
}

TEST_F(AttemptFilesTest, AFileOverItsCapIsRefusedWithoutReadingIt) {
  // 100 MB, sparse: the cap is checked on fstat, before any byte is read.
  UniqueFd f(::open((dir_ / kOutputFileName).c_str(), O_WRONLY | O_CREAT, 0600));
  ASSERT_EQ(::ftruncate(f.get(), off_t{100} << 20), 0);
  auto r = ReadAttemptFile(fd_.get(), kOutputFileName, ::geteuid(), kMaxResultFileBytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("larger than"), std::string::npos);
  auto tail = ReadAttemptFileTail(fd_.get(), kOutputFileName, ::geteuid(), 10);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->size(), 10u);
}

TEST_F(AttemptFilesTest, DeepJsonIsRefusedNotRecursedInto) {
  std::string deep(2'000'000, '[');
  deep += std::string(2'000'000, ']');
  TestDir::Write(dir_ / kUsageFileName, deep);
  auto r = ReadAttemptJson(fd_.get(), kUsageFileName, ::geteuid(), kMaxResultFileBytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nested deeper"), std::string::npos);
}

TEST(PrivateDirectory, GroupWritableOrForeignOrSymlinkedIsRefusedByName) {
  TestDir d;
  ASSERT_EQ(::mkdir((d / "spool").c_str(), 0700), 0);
  EXPECT_TRUE(OpenPrivateDirectory(d / "spool", ::geteuid(), "spool directory").ok());
  ASSERT_EQ(::chmod((d / "spool").c_str(), 0770), 0);
  auto loose = OpenPrivateDirectory(d / "spool", ::geteuid(), "spool directory");
  ASSERT_FALSE(loose.ok());
  EXPECT_NE(loose.status().message().find(d / "spool"), std::string::npos);
  EXPECT_NE(loose.status().message().find("writable by group or others"), std::string::npos);
  ASSERT_EQ(::chmod((d / "spool").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((d / "spool").c_str(), (d / "link").c_str()), 0);
  EXPECT_EQ(OpenPrivateDirectory(d / "link", ::geteuid(), "spool directory").status().code(), Code::kPermissionDenied);
  EXPECT_EQ(OpenPrivateDirectory(d / "spool", ::geteuid() + 1, "spool directory").status().code(),
            Code::kPermissionDenied);
}

TEST(PrivateDirectory, MadeWith0700WhateverTheUmask) {
  TestDir d;
  const mode_t old = ::umask(002);
  auto fd = MakePrivateDirectory(d / "a/b/spool", ::geteuid(), "spool directory");
  ::umask(old);
  ASSERT_TRUE(fd.ok()) << fd.status().message();
  struct stat st {};
  ASSERT_EQ(::stat((d / "a/b/spool").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(LeaseFileTest, ACoordinatorOfAnotherOriginIsRefused) {
  Lease lease = TestLease();
  auto same = ParseLeaseFile(SerializeLease(lease, "http://127.0.0.1:8470"));
  auto other = ParseLeaseFile(SerializeLease(lease, "http://127.0.0.1:9999"));
  auto none = ParseLeaseFile(SerializeLease(lease));
  ASSERT_TRUE(same.ok() && other.ok() && none.ok()) << same.status().message();
  EXPECT_TRUE(CheckLeaseFileOrigin(*same, "http://127.0.0.1:8470/").ok());
  EXPECT_TRUE(CheckLeaseFileOrigin(*none, "http://127.0.0.1:8470").ok());
  Status refused = CheckLeaseFileOrigin(*other, "http://127.0.0.1:8470");
  EXPECT_EQ(refused.code(), Code::kPermissionDenied);
  EXPECT_EQ(refused.message().find("9999"), std::string::npos);
}

TEST(PlacementFileTest, RoundTripsAndRefusesBadEntries) {
  PlacementFile f;
  f.ranks.push_back({0, "n1", {0, 1}, {}, {0}});
  f.ranks.push_back({1, "n2", {2}, {1}, {1}});
  auto back = ParsePlacementFile(SerializePlacementFile(f));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_NE(back->Find(1), nullptr);
  EXPECT_EQ(back->Find(1)->node, "n2");
  EXPECT_EQ(back->Find(1)->gpus, std::vector<int>{1});
  EXPECT_EQ(back->Find(7), nullptr);
  EXPECT_FALSE(ParsePlacementFile(R"({"ranks":[{"rank":0,"cpus":[-1]}]})").ok());
  EXPECT_FALSE(ParsePlacementFile(R"({"ranks":[{"cpus":[1]}]})").ok());
}

}  // namespace
}  // namespace scimesh
