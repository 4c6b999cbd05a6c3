// Unit tests for running a short command and reading its output.
#include "launcher/command_output.h"

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

using std::chrono::milliseconds;

TEST(CommandOutputTest, ReturnsStandardOutput) {
  auto out = CommandOutput({"printf", "%s\\n", "hello"}, milliseconds(5000));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "hello\n");
}

TEST(CommandOutputTest, NonZeroExitCarriesTheFirstErrorLine) {
  auto out = CommandOutput({"sh", "-c", "echo 'first line' >&2; echo second >&2; exit 3"}, milliseconds(5000));
  EXPECT_EQ(out.status().code(), Code::kUnavailable);
  EXPECT_EQ(out.status().message(), "sh exited 3: first line");
}

TEST(CommandOutputTest, MissingProgramFails) {
  auto out = CommandOutput({"scimesh-no-such-program"}, milliseconds(5000));
  EXPECT_EQ(out.status().code(), Code::kUnavailable);
  EXPECT_FALSE(CommandOutput({}, milliseconds(10)).ok());
}

TEST(CommandOutputTest, ACommandThatHangsIsKilledAtTheDeadline) {
  auto out = CommandOutput({"sleep", "30"}, milliseconds(200));
  EXPECT_EQ(out.status().code(), Code::kTimeout);
}

TEST(CommandOutputTest, TooMuchOutputIsRefused) {
  auto out = CommandOutput({"sh", "-c", "yes | head -c 100000"}, milliseconds(5000), 1000);
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace scimesh::launcher
