// Unit tests for directory artifacts: a round trip, and each malicious
// archive shape refused before anything is unpacked.
#include "launcher/step/directory_archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <filesystem>

#include "protocol/util/sha256.h"
#include "protocol/util/unique_fd.h"
#include "tests/support/test_dir.h"

namespace scimesh::launcher {
namespace {

namespace fs = std::filesystem;

UniqueFd OpenDir(const std::string& path) { return UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); }

// Packs `dir` into `archive`.
Status Pack(const std::string& dir, const std::string& archive, const ArchiveLimits& limits = {}) {
  UniqueFd d = OpenDir(dir);
  UniqueFd out(::open(archive.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  return PackDirectory(d.get(), out.get(), limits);
}

Status Unpack(const std::string& archive, const std::string& dest, const ArchiveLimits& limits = {}) {
  fs::create_directories(dest);
  UniqueFd in(::open(archive.c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd d = OpenDir(dest);
  return UnpackArchive(in.get(), d.get(), limits);
}

// One hand-made ustar entry: what a hostile producer could upload.
std::string Entry(const std::string& name, char type, const std::string& content = "", const std::string& link = "") {
  std::array<char, 512> b{};
  std::memcpy(b.data(), name.data(), std::min<size_t>(name.size(), 100));
  std::snprintf(&b[100], 8, "%07o", 0644);
  std::snprintf(&b[108], 8, "%07o", 0);
  std::snprintf(&b[116], 8, "%07o", 0);
  std::snprintf(&b[124], 12, "%011zo", content.size());
  std::snprintf(&b[136], 12, "%011o", 0);
  b[156] = type;
  std::memcpy(&b[157], link.data(), std::min<size_t>(link.size(), 100));
  std::memcpy(&b[257], "ustar", 6);
  std::memcpy(&b[263], "00", 2);
  std::memset(&b[148], ' ', 8);
  unsigned sum = 0;
  for (char c : b) sum += static_cast<unsigned char>(c);
  std::snprintf(&b[148], 8, "%06o", sum);
  std::string out(b.data(), b.size());
  out += content;
  out.append((512 - content.size() % 512) % 512, '\0');
  return out;
}

std::string Archive(const std::string& entries) { return entries + std::string(1024, '\0'); }

class DirectoryArchiveTest : public ::testing::Test {
 protected:
  // Unpacks `archive_bytes`; the error message, and that nothing was written.
  std::string Refusal(const std::string& archive_bytes, const ArchiveLimits& limits = {}) {
    TestDir::Write(tmp_ / "evil.tar", archive_bytes);
    Status s = Unpack(tmp_ / "evil.tar", tmp_ / "dest", limits);
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(fs::is_empty(tmp_ / "dest")) << "something was unpacked before the archive was refused";
    EXPECT_FALSE(fs::exists(tmp_ / "escaped"));
    return s.message();
  }
  TestDir tmp_;
};

TEST_F(DirectoryArchiveTest, RoundTripKeepsEveryFileAndTheSameBytesGiveTheSameSha256) {
  fs::create_directories(tmp_ / "case/sub/deeper");
  fs::create_directories(tmp_ / "case/empty");
  TestDir::Write(tmp_ / "case/mesh.txt", "points 200\n");
  std::string binary(70001, '\0');
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 7);
  TestDir::Write(tmp_ / "case/sub/deeper/field.bin", binary);
  const std::string long_name(90, 'n');  // a path over 100 bytes: ustar's prefix field
  fs::create_directories(tmp_ / ("case/" + long_name));
  TestDir::Write(tmp_ / ("case/" + long_name + "/" + long_name), "long");

  ASSERT_TRUE(Pack(tmp_ / "case", tmp_ / "case.tar").ok());
  ASSERT_TRUE(Unpack(tmp_ / "case.tar", tmp_ / "out").ok());
  EXPECT_EQ(TestDir::Read(tmp_ / "out/mesh.txt"), "points 200\n");
  EXPECT_EQ(TestDir::Read(tmp_ / "out/sub/deeper/field.bin"), binary);
  EXPECT_TRUE(fs::is_directory(tmp_ / "out/empty"));
  EXPECT_EQ(TestDir::Read(tmp_ / ("out/" + long_name + "/" + long_name)), "long");

  // Packing the unpacked tree again gives the same archive, byte for byte.
  ASSERT_TRUE(Pack(tmp_ / "out", tmp_ / "again.tar").ok());
  EXPECT_EQ(Sha256Hex(TestDir::Read(tmp_ / "again.tar")), Sha256Hex(TestDir::Read(tmp_ / "case.tar")));
}

TEST_F(DirectoryArchiveTest, PackingRefusesLinksAndSpecialFiles) {
  fs::create_directories(tmp_ / "a");
  fs::create_symlink("/etc/passwd", tmp_ / "a/link");
  EXPECT_EQ(Pack(tmp_ / "a", tmp_ / "a.tar").message(), "'link': a symbolic link (only files and directories are packed)");
  fs::create_directories(tmp_ / "b/sub");
  ASSERT_EQ(::mkfifo((tmp_ / "b/sub/pipe").c_str(), 0600), 0);
  EXPECT_EQ(Pack(tmp_ / "b", tmp_ / "b.tar").message(),
            "'sub/pipe': not a regular file or directory (a device, FIFO or socket)");
}

TEST_F(DirectoryArchiveTest, PackingRefusesTreesOverTheLimits) {
  fs::create_directories(tmp_ / "c");
  for (const char* n : {"1", "2", "3"}) TestDir::Write(tmp_ / (std::string("c/") + n), "0123456789");
  EXPECT_NE(Pack(tmp_ / "c", tmp_ / "c.tar", {.max_bytes = 25}).message().find("over 25 bytes"), std::string::npos);
  EXPECT_NE(Pack(tmp_ / "c", tmp_ / "c.tar", {.max_entries = 2}).message().find("more than 2 entries"), std::string::npos);
}

TEST_F(DirectoryArchiveTest, AbsolutePathIsRefused) {
  EXPECT_EQ(Refusal(Archive(Entry("ok.txt", '0', "fine") + Entry("/tmp/escaped", '0', "x"))),
            "'/tmp/escaped': an absolute or empty path");
}

TEST_F(DirectoryArchiveTest, DotDotIsRefused) {
  EXPECT_EQ(Refusal(Archive(Entry("ok.txt", '0', "fine") + Entry("sub/../../escaped", '0', "x"))),
            "'sub/../../escaped': a path with an empty, '.' or '..' component");
}

TEST_F(DirectoryArchiveTest, SymlinkIsRefused) {
  EXPECT_EQ(Refusal(Archive(Entry("ok.txt", '0', "fine") + Entry("link", '2', "", "/etc"))), "'link': a symbolic link");
}

TEST_F(DirectoryArchiveTest, HardLinkIsRefused) {
  EXPECT_EQ(Refusal(Archive(Entry("ok.txt", '0', "fine") + Entry("hard", '1', "", "/etc/shadow"))), "'hard': a hard link");
}

TEST_F(DirectoryArchiveTest, DevicesAndFifosAreRefused) {
  EXPECT_EQ(Refusal(Archive(Entry("null", '3'))), "'null': a device");
  EXPECT_EQ(Refusal(Archive(Entry("disk", '4'))), "'disk': a device");
  EXPECT_EQ(Refusal(Archive(Entry("pipe", '6'))), "'pipe': a FIFO");
}

TEST_F(DirectoryArchiveTest, TooBigIsRefused) {
  EXPECT_EQ(Refusal(Archive(Entry("a", '0', std::string(600, 'x')) + Entry("b", '0', std::string(600, 'y'))),
                    {.max_bytes = 1000}),
            "more than 1000 bytes unpacked");
}

TEST_F(DirectoryArchiveTest, TooManyFilesIsRefused) {
  EXPECT_EQ(Refusal(Archive(Entry("a", '0', "1") + Entry("b", '0', "2") + Entry("c", '0', "3")), {.max_entries = 2}),
            "more than 2 entries");
}

TEST_F(DirectoryArchiveTest, MalformedArchivesAreRefused) {
  std::string bad = Archive(Entry("a", '0', "1"));
  bad[148] = '7';  // checksum
  EXPECT_EQ(Refusal(bad), "'a': not a valid ustar header (bad magic or checksum)");
  EXPECT_EQ(Refusal(Entry("a", '0', "1")), "the archive is truncated (no end-of-archive block)");
  std::string lying = Entry("a", '0', std::string(2000, 'z')).substr(0, 1024);  // says 2000 bytes, holds 512
  EXPECT_EQ(Refusal(lying), "'a': larger than the archive holds");
  // The same name twice: the second may not replace the first.
  EXPECT_FALSE(Unpack((TestDir::Write(tmp_ / "twice.tar", Archive(Entry("a", '0', "1") + Entry("a", '0', "2"))),
                       tmp_ / "twice.tar"),
                      tmp_ / "twice").ok());
  EXPECT_EQ(TestDir::Read(tmp_ / "twice/a"), "1");
}

}  // namespace
}  // namespace scimesh::launcher
