// Messages leaving the worker: no stack trace, no local path, no secret.
#include "protocol/wire/fail_message.h"

#include <gtest/gtest.h>

#include "protocol/util/log.h"

namespace scimesh {
namespace {

TEST(FailMessage, KeepsOnlyTheFirstLine) {
  EXPECT_EQ(SanitizeFailMessage("solver diverged\nTraceback (most recent call last):\n  File \"x.py\""),
            "solver diverged");
  EXPECT_EQ(SanitizeFailMessage("boom\r\n#0 0x1 in main"), "boom");
}

TEST(FailMessage, CutsLocalPathsToTheirLastComponent) {
  EXPECT_EQ(StripDirectories("cannot open /home/alice/runs/r1/mesh.vti: no such file"),
            "cannot open mesh.vti: no such file");
  EXPECT_EQ(StripDirectories("read '~/data/in.h5' failed"), "read 'in.h5' failed");
  EXPECT_EQ(StripDirectories("path=/scratch/u/out/ (dir)"), "path=out (dir)");
  EXPECT_EQ(StripDirectories("see file:///srv/spool/r/s/1/log.txt"), "see log.txt");
  EXPECT_EQ(StripDirectories("GET http://127.0.0.1:8470/v1/api/runs failed"),
            "GET http://127.0.0.1:8470/v1/api/runs failed");
  EXPECT_EQ(StripDirectories("ratio 3/4 and and/or stay"), "ratio 3/4 and and/or stay");
}

TEST(FailMessage, RedactsSecrets) {
  log::AddSecret("s3cr3t-token-xyz");
  EXPECT_EQ(SanitizeFailMessage("auth s3cr3t-token-xyz refused"), "auth [redacted] refused");
  EXPECT_EQ(SanitizeFailMessage("header Authorization: Bearer abc.def"), "header Authorization: Bearer [redacted]");
}

TEST(FailMessage, IsValidUtf8AndAtMost4KiB) {
  EXPECT_EQ(SanitizeFailMessage("bad \xff\xfe byte"), "bad ?? byte");
  EXPECT_EQ(SanitizeFailMessage("tab\tand \x01 control"), "tab\tand ? control");
  std::string long_message;
  for (int i = 0; i < 3000; ++i) long_message += "\xc3\xa9";  // 'é', two bytes each
  const std::string out = SanitizeFailMessage(long_message);
  EXPECT_LE(out.size(), kMaxFailMessageBytes);
  EXPECT_EQ(out.size() % 2, 0u);  // never cut inside a character
  EXPECT_EQ(SanitizeFailMessage(""), "(no message)");
  EXPECT_EQ(SanitizeFailMessage("\n trace"), "(no message)");
}

}  // namespace
}  // namespace scimesh
