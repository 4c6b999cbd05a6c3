// Unit tests for --spank=auto|yes|no and the srun --help detection.
#include "launcher/step/spank_use.h"

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

// What srun 22.05 prints with spank_scimesh.so in plugstack.conf (abridged).
constexpr char kHelpWithPlugin[] = R"(Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]] [ : [OPTIONS(N)...]] executable(N) [args(N)...]

Parallel run options:
  -A, --account=name          charge job to specified account
      --x11[=<all|first|last>] Sets up X11 forwarding on all, first or last node(s)

Options provided by plugins:
      --scimesh-lease=DIR|LEASE
                              [scimesh] the attempt directory (or lease id) of
                              the lease this job step holds

Help options:
  -h, --help                  show this help message
)";

constexpr char kHelpWithoutPlugin[] = R"(Usage: srun [OPTIONS(0)...]
Parallel run options:
  -A, --account=name          charge job to specified account
Help options:
  -h, --help                  show this help message
)";

// Counts calls to `srun --help` and returns a canned answer.
struct FakeSrun {
  Result<std::string> answer = std::string(kHelpWithPlugin);
  int calls = 0;
  std::function<Result<std::string>()> fn() {
    return [this]() {
      ++calls;
      return answer;
    };
  }
};

TEST(SpankUseTest, ParsesTheThreeChoices) {
  EXPECT_EQ(*ParseSpankUse("auto"), SpankUse::kAuto);
  EXPECT_EQ(*ParseSpankUse("yes"), SpankUse::kYes);
  EXPECT_EQ(*ParseSpankUse("no"), SpankUse::kNo);
  for (const char* bad : {"", "Yes", "1", "true", "off"}) {
    EXPECT_EQ(ParseSpankUse(bad).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(SpankUseTest, FindsThePluginsOptionInSrunHelp) {
  EXPECT_TRUE(SrunHelpListsLeaseOption(kHelpWithPlugin));
  EXPECT_FALSE(SrunHelpListsLeaseOption(kHelpWithoutPlugin));
  EXPECT_FALSE(SrunHelpListsLeaseOption(""));
  // Listed with or without an argument spelling, at the end of the text.
  EXPECT_TRUE(SrunHelpListsLeaseOption("      --scimesh-lease"));
  EXPECT_TRUE(SrunHelpListsLeaseOption("  --scimesh-lease[=DIR]  x\n"));
}

TEST(SpankUseTest, AnotherOptionWithTheSamePrefixOrAMentionIsNotThePlugin) {
  EXPECT_FALSE(SrunHelpListsLeaseOption("      --scimesh-lease-file=F   another plugin\n"));
  EXPECT_FALSE(SrunHelpListsLeaseOption("      --no-scimesh-lease   x\n"));
  EXPECT_FALSE(SrunHelpListsLeaseOption("  see x--scimesh-lease\n"));
}

TEST(SpankUseTest, AutoUsesThePluginExactlyWhenSrunListsIt) {
  FakeSrun srun;
  std::string note;
  EXPECT_TRUE(*ResolveSpankUse(SpankUse::kAuto, Backend::kSlurm, srun.fn(), &note));
  EXPECT_NE(note.find("is loaded"), std::string::npos) << note;
  srun.answer = std::string(kHelpWithoutPlugin);
  EXPECT_FALSE(*ResolveSpankUse(SpankUse::kAuto, Backend::kSlurm, srun.fn(), &note));
  EXPECT_NE(note.find("not loaded"), std::string::npos) << note;
  EXPECT_EQ(srun.calls, 2);
}

TEST(SpankUseTest, AutoRunsWithoutThePluginWhenSrunCannotSay) {
  FakeSrun srun;
  srun.answer = Status::Unavailable("srun exited 1: no config");
  std::string note;
  auto use = ResolveSpankUse(SpankUse::kAuto, Backend::kSlurm, srun.fn(), &note);
  ASSERT_TRUE(use.ok()) << use.status().ToString();
  EXPECT_FALSE(*use);
  EXPECT_NE(note.find("srun exited 1: no config"), std::string::npos) << note;
}

TEST(SpankUseTest, YesFailsClearlyWhenThePluginIsNotLoaded) {
  FakeSrun srun;
  EXPECT_TRUE(*ResolveSpankUse(SpankUse::kYes, Backend::kSlurm, srun.fn()));
  srun.answer = std::string(kHelpWithoutPlugin);
  auto missing = ResolveSpankUse(SpankUse::kYes, Backend::kSlurm, srun.fn());
  EXPECT_EQ(missing.status().code(), Code::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("not loaded"), std::string::npos) << missing.status().message();
  srun.answer = Status::Timeout("srun took too long");
  auto unknown = ResolveSpankUse(SpankUse::kYes, Backend::kSlurm, srun.fn());
  EXPECT_NE(unknown.status().message().find("srun took too long"), std::string::npos);
}

TEST(SpankUseTest, NoAndTheLocalBackendNeverAskSrun) {
  FakeSrun srun;
  EXPECT_FALSE(*ResolveSpankUse(SpankUse::kNo, Backend::kSlurm, srun.fn()));
  EXPECT_FALSE(*ResolveSpankUse(SpankUse::kAuto, Backend::kLocal, srun.fn()));
  EXPECT_EQ(ResolveSpankUse(SpankUse::kYes, Backend::kLocal, srun.fn()).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(srun.calls, 0);
}

}  // namespace
}  // namespace scimesh::launcher
