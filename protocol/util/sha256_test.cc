// SHA-256 against known digests, streaming and from a file.
#include "protocol/util/sha256.h"

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "protocol/wire/identifiers.h"

namespace scimesh {
namespace {

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // The digests in docs/protocol/ examples.
  EXPECT_EQ(Sha256Hex("foo"), "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae");
  EXPECT_EQ(Sha256Hex("test"), "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
}

TEST(Sha256, StreamingEqualsOneShotAndResets) {
  Sha256 h;
  h.Update("fo");
  h.Update("o");
  EXPECT_EQ(h.HexDigest(), Sha256Hex("foo"));
  h.Update("garbage");
  h.Reset();
  h.Update("test");
  EXPECT_EQ(h.HexDigest(), Sha256Hex("test"));
}

TEST(Sha256, OfAFileFromOffsetZero) {
  int fd = ::memfd_create("t", MFD_CLOEXEC);
  const std::string data(300000, 'z');
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  auto d = Sha256OfFd(fd);
  ::close(fd);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->size, 300000);
  EXPECT_EQ(d->sha256, Sha256Hex(data));
  EXPECT_TRUE(CheckSha256(d->sha256, "x").ok());
}

TEST(Identifiers, FollowTheConventions) {
  EXPECT_TRUE(CheckIdentifier("solve-16", "f").ok());
  EXPECT_FALSE(CheckIdentifier(std::string(65, 'a'), "f").ok());
  EXPECT_TRUE(CheckWorkerId("scimesh-dev/42/n1", "f").ok());
  EXPECT_TRUE(CheckWorkerId("w@host:1", "f").ok());
  EXPECT_FALSE(CheckWorkerId("w 1", "f").ok());
  EXPECT_TRUE(CheckLeaseId("l_0c8e51d2a4b94f17", "f").ok());
  EXPECT_FALSE(CheckLeaseId("l_0C8E51D2A4B94F17", "f").ok());
  EXPECT_FALSE(CheckRunId("l_0c8e51d2a4b94f17", "f").ok());
  EXPECT_TRUE(CheckArtifactName("solution.vti", "f").ok());
  EXPECT_FALSE(CheckArtifactName(".solution.vti", "f").ok());
}

}  // namespace
}  // namespace scimesh
