// The redacting log sink.
#include "protocol/util/log.h"

#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace scimesh {
namespace {

TEST(Log, RedactsRegisteredSecretsEverywhereInALine) {
  log::AddSecret("k3y-abc");
  EXPECT_EQ(log::Redact("k3y-abc and again k3y-abck3y-abc"), "[redacted] and again [redacted][redacted]");
  log::AddSecret("");  // ignored, not "redact everything"
  EXPECT_EQ(log::Redact("plain"), "plain");
}

TEST(Log, RedactsBearerCredentialsItWasNeverTold) {
  EXPECT_EQ(log::Redact("Authorization: Bearer eyJhbGc.x.y"), "Authorization: Bearer [redacted]");
  EXPECT_EQ(log::Redact("authorization: bearer   zzz next"), "authorization: bearer   [redacted] next");
  EXPECT_EQ(log::Redact(R"({"h":"Bearer q1"})"), R"({"h":"Bearer [redacted]"})");
  EXPECT_EQ(log::Redact("the bearer of bad news"), "the bearer [redacted] bad news");  // better safe
}

TEST(Log, EveryLoggerWritesThroughTheRedactor) {
  std::ostringstream out;
  log::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  log::AddSecret("tok-via-logger-91");
  log::For("unit")->warn("refused tok-via-logger-91 from {}", "Bearer tok-other");
  log::For("unit")->flush();
  log::SetSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  const std::string line = out.str();
  EXPECT_NE(line.find("[unit] [warning] refused [redacted] from Bearer [redacted]"), std::string::npos) << line;
  EXPECT_EQ(line.find("tok-"), std::string::npos) << line;
}

TEST(Log, ControlCharactersCannotForgeLines) {
  EXPECT_EQ(log::EscapeForLog("n1\n[2026-12-01] [launcher] [info] lease done"),
            "n1\\n[2026-12-01] [launcher] [info] lease done");
  EXPECT_EQ(log::EscapeForLog("a\rb\tc\x1b[31md\x7f"), "a\\rb\\tc\\x1b[31md\\x7f");
  EXPECT_EQ(log::EscapeForLog("plain \xc3\xa9"), "plain \xc3\xa9");  // UTF-8 stays
}

TEST(Log, EveryLineThroughTheSinkIsEscaped) {
  std::ostringstream out;
  log::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  log::For("unit")->warn("host {}", "n1\nFORGED LINE");
  log::For("unit")->flush();
  log::SetSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(text.find("host n1\\nFORGED LINE"), std::string::npos) << text;
}

}  // namespace
}  // namespace scimesh
