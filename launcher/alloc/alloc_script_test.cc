// Unit tests for the generated batch script: its text, its quoting as bash
// reads it back, and the checks on its settings.
#include "launcher/alloc/alloc_script.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "launcher/allocation/command_output.h"
#include "tests/support/test_dir.h"

namespace scimesh::alloc {
namespace {

LaunchSettings Settings() {
  LaunchSettings s;
  s.launcher = "/opt/scimesh/bin/scimesh-launch";
  s.definitions = "/home/ana/mesh-study.json";
  s.spool = "/scratch/ana/spool";
  s.events_dir = "/scratch/ana/events";
  s.url = "http://head:8470";
  s.token_file = "/home/ana/.scimesh/worker.token";
  return s;
}

TEST(BatchScriptTest, IsTheLauncherLineWithEveryWordQuoted) {
  LaunchSettings s = Settings();
  s.idle_exit_s = 300;
  s.drain_margin_s = 150;
  s.drain_grace_s = 30;
  s.launcher_args = {"--log-level", "debug"};
  EXPECT_EQ(BatchScript(s),
            "#!/bin/bash\n"
            "# Submitted by scimesh-alloc: one allocation that fills itself with steps\n"
            "# leased from the coordinator (examples/fill.sbatch is the template).\n"
            "export SCIMESH_URL='http://head:8470'\n"
            "export SCIMESH_TOKEN_FILE='/home/ana/.scimesh/worker.token'\n"
            "# exec: the batch shell's SIGUSR1 goes straight to the launcher.\n"
            "exec '/opt/scimesh/bin/scimesh-launch' --definitions '/home/ana/mesh-study.json'"
            " --spool '/scratch/ana/spool' --events '/scratch/ana/events/scimesh-events-'\"$SLURM_JOB_ID\"'.jsonl'"
            " --drain-margin 150 --drain-grace 30 --idle-exit 300 '--log-level' 'debug'\n");
}

TEST(BatchScriptTest, NoTokenFileExportsNone) {
  LaunchSettings s = Settings();
  s.token_file.clear();
  EXPECT_EQ(BatchScript(s).find("SCIMESH_TOKEN_FILE"), std::string::npos);
}

// bash runs the script with a fake launcher that prints its argv and
// environment: every hostile word comes back as it went in.
TEST(BatchScriptTest, BashReadsEveryWordBackAsGiven) {
  TestDir dir;
  const std::string launcher = dir / "it's \"the\" $launcher";
  TestDir::Write(launcher,
                 "#!/bin/sh\n"
                 "printf '%s\\n' \"URL=$SCIMESH_URL\" \"TOKEN_FILE=$SCIMESH_TOKEN_FILE\"\n"
                 "for a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n");
  ASSERT_EQ(chmod(launcher.c_str(), 0700), 0);
  LaunchSettings s = Settings();
  s.launcher = launcher;
  s.definitions = "/d/$(touch /tmp/x) `id` 'q'.json";
  s.spool = "/s/a b\\c";
  s.events_dir = "/e/*";
  s.url = "http://h:1/?a=1&b='2'";
  s.token_file = "/t/$HOME";
  s.launcher_args = {"", "a'b", "!x", "${y}"};
  const std::string script = dir / "job.sh";
  TestDir::Write(script, BatchScript(s));
  ASSERT_EQ(setenv("SLURM_JOB_ID", "4242", 1), 0);
  auto out = launcher::CommandOutput({"bash", script}, std::chrono::seconds(10));
  unsetenv("SLURM_JOB_ID");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out,
            "URL=http://h:1/?a=1&b='2'\n"
            "TOKEN_FILE=/t/$HOME\n"
            "[--definitions]\n[/d/$(touch /tmp/x) `id` 'q'.json]\n"
            "[--spool]\n[/s/a b\\c]\n"
            "[--events]\n[/e/*/scimesh-events-4242.jsonl]\n"
            "[--drain-margin]\n[120]\n[--drain-grace]\n[60]\n[--idle-exit]\n[120]\n"
            "[]\n[a'b]\n[!x]\n[${y}]\n");
}

TEST(CheckLaunchSettingsTest, TakesAbsolutePathsAndAnEmptyTokenFile) {
  EXPECT_TRUE(CheckLaunchSettings(Settings()).ok());
  LaunchSettings s = Settings();
  s.token_file.clear();
  EXPECT_TRUE(CheckLaunchSettings(s).ok());
}

TEST(CheckLaunchSettingsTest, RefusesBadWordsNamingTheField) {
  struct Case {
    const char* name;
    void (*mutate)(LaunchSettings&);
    const char* field;
  };
  const Case cases[] = {
      {"relative launcher", [](LaunchSettings& s) { s.launcher = "scimesh-launch"; }, "launcher"},
      {"empty definitions", [](LaunchSettings& s) { s.definitions.clear(); }, "definitions"},
      {"newline in spool", [](LaunchSettings& s) { s.spool = "/s\n/x"; }, "spool"},
      {"relative events dir", [](LaunchSettings& s) { s.events_dir = "events"; }, "events_dir"},
      {"relative token file", [](LaunchSettings& s) { s.token_file = "worker.token"; }, "token_file"},
      {"NUL in token file", [](LaunchSettings& s) { s.token_file = std::string("/t\0x", 4); }, "token_file"},
      {"newline in url", [](LaunchSettings& s) { s.url = "http://h\nrm -rf /"; }, "url"},
      {"empty url", [](LaunchSettings& s) { s.url.clear(); }, "url"},
      {"CR in a launcher arg", [](LaunchSettings& s) { s.launcher_args = {"ok", "a\rb"}; }, "launcher_args"},
  };
  for (const auto& c : cases) {
    LaunchSettings s = Settings();
    c.mutate(s);
    const Status status = CheckLaunchSettings(s);
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << c.name;
    EXPECT_EQ(status.field().value_or(""), c.field) << c.name << ": " << status.message();
  }
  LaunchSettings s = Settings();
  s.drain_grace_s = -1;
  EXPECT_EQ(CheckLaunchSettings(s).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace scimesh::alloc
