// scimesh-alloc's state directory and locks: private, one holder, per name
// and per workflow.
#include "launcher/alloc/alloc_state_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace scimesh::alloc {
namespace {

class StateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("alloc-state-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

TEST_F(StateDirTest, MadePrivateWithItsJobsDirectory) {
  const std::string dir = (root_ / "a" / "mesh").string();
  ASSERT_TRUE(MakeStateDir(dir).ok());
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/jobs"));
  EXPECT_TRUE(MakeStateDir(dir).ok());  // again: nothing to do
}

TEST_F(StateDirTest, ADirectoryOthersMayOpenOrASymlinkIsRefused) {
  const std::string open_dir = (root_ / "open").string();
  std::filesystem::create_directories(open_dir + "/jobs");
  ::chmod(open_dir.c_str(), 0755);
  EXPECT_EQ(MakeStateDir(open_dir).message(), open_dir + " is open to group or others (chmod 700 it)");
  const std::string link = (root_ / "link").string();
  std::filesystem::create_directory_symlink(open_dir, link);
  EXPECT_EQ(MakeStateDir(link).message(), link + " is not a directory");
}

TEST_F(StateDirTest, OneHolderPerStateDirectory) {
  const std::string dir = (root_ / "mesh").string();
  ASSERT_TRUE(MakeStateDir(dir).ok());
  EXPECT_FALSE(StateDirLocked(dir));
  ASSERT_TRUE(LockStateDir(dir).ok());
  EXPECT_TRUE(StateDirLocked(dir));
  // flock belongs to the open file: a second open, even in this process, is refused.
  EXPECT_EQ(LockStateDir(dir).message(), "another scimesh-alloc (pid " + std::to_string(::getpid()) + ") uses " +
                                             dir + ": one instance per name at a time");
}

TEST_F(StateDirTest, OneHolderPerWorkflowWhateverTheName) {
  const std::string locks = (root_ / "locks").string();
  ASSERT_TRUE(LockWorkflows({"mesh", "poisson"}, locks).ok());
  EXPECT_TRUE(LockWorkflows({"other"}, locks).ok());
  const Status again = LockWorkflows({"other2", "poisson"}, locks);
  EXPECT_EQ(again.code(), Code::kConflict);
  EXPECT_EQ(again.message(), "another scimesh-alloc (pid " + std::to_string(::getpid()) +
                                 ") serves workflow poisson: one instance per workflow");
}

}  // namespace
}  // namespace scimesh::alloc
