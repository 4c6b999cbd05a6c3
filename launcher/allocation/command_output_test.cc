// Unit tests for running a short command and reading its output.
#include "launcher/allocation/command_output.h"

#include <sys/types.h>

#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

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

TEST(RunCommandTest, KeepsTheExitStatusAndEveryErrorLine) {
  auto run = RunCommand({"sh", "-c", "echo out; echo 'first line' >&2; echo 'last line' >&2; exit 3"},
                        milliseconds(5000));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_FALSE(run->exit.signaled);
  EXPECT_EQ(run->exit.code, 3);
  EXPECT_EQ(run->out, "out\n");
  EXPECT_EQ(run->err, "first line\nlast line\n");
}

TEST(RunCommandTest, KeepsTheStartOfALongErrorOutput) {
  auto run = RunCommand({"sh", "-c", "yes e | head -c 200000 >&2; echo done"}, milliseconds(5000));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->exit.code, 0);
  EXPECT_EQ(run->out, "done\n");
  EXPECT_EQ(run->err.size(), 64u * 1024);
}

TEST(CommandOutputTest, MissingProgramFails) {
  auto out = CommandOutput({"scimesh-no-such-program"}, milliseconds(5000));
  EXPECT_EQ(out.status().code(), Code::kUnavailable);
  EXPECT_FALSE(CommandOutput({}, milliseconds(10)).ok());
}

// True once `pid` has ended (gone, or a zombie waiting for init).
bool Ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  if (text.empty()) return true;
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && text.compare(paren + 2, 1, "Z") == 0;
}

pid_t ReadPid(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// The command and what it started in the background are both killed.
TEST(CommandOutputTest, ACommandThatHangsIsKilledAtTheDeadlineWithWhatItStarted) {
  TestDir dir;
  const std::string shell_pid = dir.path() + "/shell.pid", sleeper_pid = dir.path() + "/sleeper.pid";
  const auto started = std::chrono::steady_clock::now();
  auto out = CommandOutput(
      {"sh", "-c", "echo $$ > " + shell_pid + "; sleep 30 & echo $! > " + sleeper_pid + "; wait"}, milliseconds(300));
  EXPECT_EQ(out.status().code(), Code::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  const pid_t shell = ReadPid(shell_pid), sleeper = ReadPid(sleeper_pid);
  ASSERT_GT(shell, 0);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(Ended(shell)) << "the command itself still runs";
  for (int i = 0; i < 100 && !Ended(sleeper); ++i) std::this_thread::sleep_for(milliseconds(20));
  EXPECT_TRUE(Ended(sleeper)) << "the command's background child still runs";
}

TEST(CommandOutputTest, TooMuchOutputIsRefused) {
  auto out = CommandOutput({"sh", "-c", "yes | head -c 100000"}, milliseconds(5000), 1000);
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace scimesh::launcher
