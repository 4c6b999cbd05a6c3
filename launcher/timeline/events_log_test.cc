// The events file stays valid JSON lines whatever a detail carries, and a
// condition that repeats (an empty claim, a failing claim) is one line.
#include "launcher/timeline/events_log.h"

#include <gtest/gtest.h>

#include <sstream>

#include "protocol/util/json_io.h"
#include "tests/support/test_dir.h"

namespace scimesh::launcher {
namespace {

// A server's message (or corrupted memory) with bytes that are not UTF-8
// must not make the events file unreadable to `scimesh-launch report` and
// the chaos checker.
TEST(EventsLogJson, InvalidUtf8BecomesQuestionMarks) {
  const std::string bad = std::string("detail \xc0\xbd") + "\x07 end";
  const std::string quoted = JsonString(bad);
  EXPECT_TRUE(IsWellFormedUtf8(quoted)) << quoted;
  EXPECT_EQ(quoted, "\"detail ??\\u0007 end\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"") << "valid UTF-8 is kept as it is";
}

std::vector<std::string> Lines(const std::string& path) {
  std::istringstream in(TestDir::Read(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool Has(const std::string& line, const std::string& part) { return line.find(part) != std::string::npos; }

TEST(EventsLogConditions, RepeatedEmptyClaimsAreOneLineAndACountWrittenAtClose) {
  TestDir dir;
  const std::string path = dir / "events.jsonl";
  {
    auto log = EventsLog::Open(path);
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 1000; ++i) (*log)->Claim(0, 4);
  }
  auto lines = Lines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(Has(lines[0], "\"event\":\"claim\",\"offered\":0,\"max\":4}")) << lines[0];
  EXPECT_TRUE(Has(lines[1], "\"offered\":0,\"max\":4,\"repeated\":999}")) << lines[1];
}

TEST(EventsLogConditions, AChangeWritesTheRepeatsThenTheNewCondition) {
  TestDir dir;
  const std::string path = dir / "events.jsonl";
  {
    auto log = EventsLog::Open(path);
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 5; ++i) (*log)->Claim(0, 4);
    (*log)->Claim(0, 2);  // other capacity: another condition
    for (int i = 0; i < 3; ++i) (*log)->Claim(2, 2);  // offers are never folded
    for (int i = 0; i < 50; ++i) (*log)->ClaimFailed("claim: cannot reach the coordinator");
    (*log)->ClaimFailed("claim answered 401 unauthorized");
    (*log)->Claim(0, 4);
  }
  auto lines = Lines(path);
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_TRUE(Has(lines[1], "\"max\":4,\"repeated\":4}")) << lines[1];
  EXPECT_TRUE(Has(lines[2], "\"offered\":0,\"max\":2}")) << lines[2];
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(Has(lines[i], "\"offered\":2,")) << lines[i];
  EXPECT_TRUE(Has(lines[6], "\"event\":\"claim_failed\",\"error\":\"claim: cannot reach the coordinator\"}"))
      << lines[6];
  EXPECT_TRUE(Has(lines[7], "\"repeated\":49}")) << lines[7];
  EXPECT_TRUE(Has(lines[8], "401 unauthorized\"}")) << lines[8];
  EXPECT_TRUE(Has(lines[9], "\"offered\":0,\"max\":4}")) << lines[9];
  for (const auto& line : lines) EXPECT_TRUE(ParseJson(line, "events line").ok()) << line;
}

}  // namespace
}  // namespace scimesh::launcher
