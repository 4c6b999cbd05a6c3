#include "launcher/agent/line_splitter.h"

#include <gtest/gtest.h>

namespace scimesh::agent {
namespace {

TEST(LineSplitter, LinesSplitAcrossReadsComeOutWhole) {
  LineSplitter s;
  EXPECT_TRUE(s.Push("{\"op\":").empty());
  EXPECT_TRUE(s.pending());
  auto lines = s.Push("\"ping\"}\n{\"op\"");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "{\"op\":\"ping\"}");
  lines = s.Push(":1}\n\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, "{\"op\":1}");
  EXPECT_EQ(lines[1].text, "");
  EXPECT_FALSE(s.pending());
}

// Attack: a peer sends an endless line to exhaust the reader's memory. The
// splitter must report it once, keep nothing of it, and serve the next line.
TEST(LineSplitter, AnOversizeLineIsReportedOnceAndDropped) {
  LineSplitter s(8);
  auto lines = s.Push("0123456");
  EXPECT_TRUE(lines.empty());
  lines = s.Push("789abc");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].oversize);
  EXPECT_TRUE(s.Push(std::string(100, 'x')).empty());  // still the same line: no second report
  lines = s.Push("yy\nok\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(lines[0].oversize);
  EXPECT_EQ(lines[0].text, "ok");
}

TEST(LineSplitter, ALineOfExactlyTheLimitPasses) {
  LineSplitter s(4);
  auto lines = s.Push("abcd\nabcde\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, "abcd");
  EXPECT_TRUE(lines[1].oversize);
}

}  // namespace
}  // namespace scimesh::agent
