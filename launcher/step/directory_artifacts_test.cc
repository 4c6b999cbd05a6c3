// Unit tests for directory artifacts in an attempt directory: packed in
// place for the upload, unpacked as inputs/<step>/<name>/ for the consumer.
#include "launcher/step/directory_artifacts.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "protocol/util/sha256.h"
#include "protocol/util/unique_fd.h"
#include "tests/support/test_dir.h"

namespace scimesh::launcher {
namespace {

namespace fs = std::filesystem;

UniqueFd OpenDir(const std::string& path) { return UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); }

InputArtifact Input(std::string step, std::string name, std::string media) {
  InputArtifact a;
  a.step_id = std::move(step);
  a.name = std::move(name);
  a.media_type = std::move(media);
  return a;
}

TEST(DirectoryArtifactsTest, ADirectoryIsPackedInPlaceAndUnpackedAsAnInputDirectory) {
  TestDir producer, consumer;
  fs::create_directories(producer / "artifacts/case/part1");
  TestDir::Write(producer / "artifacts/case/part1/field.txt", "1 2 3\n");
  TestDir::Write(producer / "artifacts/case/mesh.txt", "200\n");
  UniqueFd pfd = OpenDir(producer.path());
  ASSERT_TRUE(PackDirectoryArtifact(pfd.get(), "case").ok());
  ASSERT_TRUE(fs::is_regular_file(producer / "artifacts/case"));  // what is uploaded
  EXPECT_TRUE(fs::exists(producer / "artifacts/.case.dir/mesh.txt"));  // the tree, not uploaded

  // The consumer's download: the archive's bytes under inputs/<step>/<name>.
  fs::create_directories(consumer / "inputs/mesh");
  fs::copy_file(producer / "artifacts/case", consumer / "inputs/mesh/case");
  TestDir::Write(consumer / "inputs/mesh/notes.txt", "a plain file stays a file");
  UniqueFd cfd = OpenDir(consumer.path());
  ASSERT_TRUE(UnpackDirectoryInputs(cfd.get(), {Input("mesh", "case", kDirectoryArtifactMediaType),
                                                Input("mesh", "notes.txt", "text/plain")})
                  .ok());
  EXPECT_EQ(TestDir::Read(consumer / "inputs/mesh/case/part1/field.txt"), "1 2 3\n");
  EXPECT_EQ(TestDir::Read(consumer / "inputs/mesh/case/mesh.txt"), "200\n");
  EXPECT_EQ(TestDir::Read(consumer / "inputs/mesh/notes.txt"), "a plain file stays a file");
  EXPECT_FALSE(fs::exists(consumer / "inputs/mesh/.case.unpack"));
}

TEST(DirectoryArtifactsTest, AFileClaimingTheDirectoryTypeIsRefused) {
  TestDir producer;
  fs::create_directories(producer / "artifacts");
  TestDir::Write(producer / "artifacts/fake", "not a directory");
  UniqueFd pfd = OpenDir(producer.path());
  EXPECT_EQ(PackDirectoryArtifact(pfd.get(), "fake").message(),
            "artifact fake: the directory media type is only for directories");
}

TEST(DirectoryArtifactsTest, AHostileInputIsRefusedNamingItAndNothingIsUnpacked) {
  TestDir consumer;
  fs::create_directories(consumer / "inputs/mesh");
  TestDir::Write(consumer / "inputs/mesh/case", "not an archive at all, and not 512 bytes long");
  UniqueFd cfd = OpenDir(consumer.path());
  Status s = UnpackDirectoryInputs(cfd.get(), {Input("mesh", "case", kDirectoryArtifactMediaType)});
  EXPECT_EQ(s.message().rfind("input artifact mesh/case: refused: ", 0), 0u) << s.message();
  EXPECT_TRUE(fs::is_regular_file(consumer / "inputs/mesh/case"));
  EXPECT_FALSE(UnpackDirectoryInputs(cfd.get(), {Input("..", "case", kDirectoryArtifactMediaType)}).ok());
}

}  // namespace
}  // namespace scimesh::launcher
