// The events file stays valid JSON lines whatever a detail carries.
#include "launcher/timeline/events_log.h"

#include <gtest/gtest.h>

#include "protocol/util/json_io.h"

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

}  // namespace
}  // namespace scimesh::launcher
