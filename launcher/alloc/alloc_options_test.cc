// scimesh-alloc's options: required flags, the config file, defaults, refusals.
#include "launcher/alloc/alloc_options.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace scimesh::alloc {
namespace {

Result<AllocOptions> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "scimesh-alloc");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseAllocOptions(static_cast<int>(argv.size()), argv.data());
}

const std::vector<std::string> kBase{"--workflow", "mesh", "--shape", "nodes=2,time=30", "--definitions",
                                     "/d/defs.json", "--launcher", "/opt/bin/scimesh-launch"};

std::vector<std::string> With(std::vector<std::string> more) {
  auto args = kBase;
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(AllocOptions, DefaultsAndDerivedValues) {
  ::setenv("HOME", "/home/u", 1);
  ::setenv("SCIMESH_TOKEN_FILE", "/home/u/.scimesh/worker.token", 1);
  ::unsetenv("SCIMESH_URL");
  auto o = Parse(With({"--workflow", "other", "--drain-margin", "90"}));
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->name, "mesh+other");
  EXPECT_EQ(JobTag(*o), "scimesh-alloc-mesh+other");
  EXPECT_EQ(o->state_dir, "/home/u/.scimesh/alloc/mesh+other");
  EXPECT_EQ(o->url, "http://127.0.0.1:8470");
  EXPECT_EQ(o->shapes.at(0), (Shape{2, 1800, 0, 0}));
  EXPECT_EQ(o->limits.margin_s, 90);
  EXPECT_EQ(o->launch.events_dir, "/home/u/.scimesh/alloc/mesh+other/jobs");
  EXPECT_EQ(o->launch.token_file, "/home/u/.scimesh/worker.token");
  EXPECT_EQ(o->launch.url, "http://127.0.0.1:8470");
  EXPECT_TRUE(o->launch.spool.starts_with("/"));
}

TEST(AllocOptions, RefusesWhatItCannotUse) {
  EXPECT_EQ(Parse({"--shape", "nodes=1,time=30", "--definitions", "/d"}).status().message(),
            "give --workflow (the workflows whose demand it serves)");
  EXPECT_EQ(Parse({"--workflow", "w", "--definitions", "/d"}).status().message(),
            "give --shape (e.g. --shape nodes=1,time=1:00:00)");
  EXPECT_EQ(Parse(With({"--max-jobs", "0"})).status().message(), "--max-jobs: '0' is not a whole number from 1");
  EXPECT_EQ(Parse(With({"--shape", "nodes=2"})).status().message(),
            "--shape: shape 'nodes=2' needs nodes= and time=, e.g. nodes=2,time=1:00:00");
  EXPECT_EQ(Parse(With({"--name", "-x"})).status().message(),
            "--name '-x': give 1 to 64 letters, digits, . _ + - (not starting with - or .)");
  EXPECT_EQ(Parse(With({"--name", "a/b"})).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Parse(With({"--bogus"})).status().message(), "unknown option '--bogus' (see --help)");
  EXPECT_EQ(Parse(With({"--max-nodes"})).status().message(), "--max-nodes needs a value");
}

TEST(AllocOptions, ConfigFileLinesAreOptionsAndLaterFlagsWin) {
  const auto path = std::filesystem::temp_directory_path() / ("alloc-conf-" + std::to_string(::getpid()));
  {
    std::ofstream conf(path);
    conf << "# a team's allocation\nworkflow mesh\nshape nodes=1,time=1:00:00\nshape=nodes=4,time=2:00:00\n"
            "definitions /d/defs.json\nlauncher /opt/bin/scimesh-launch\nmax-jobs 6\n"
            "sbatch-arg --constraint=ib\n";
  }
  auto o = Parse({"--config", path.string(), "--max-jobs", "2"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->shapes.size(), 2u);
  EXPECT_EQ(o->shapes[1].nodes, 4);
  EXPECT_EQ(o->limits.max_jobs, 2);
  EXPECT_EQ(o->sbatch_args, std::vector<std::string>{"--constraint=ib"});
  {
    std::ofstream conf(path);
    conf << "workflow mesh\ntoken abc\n";
  }
  EXPECT_EQ(Parse({"--config", path.string()}).status().message(),
            "--config " + path.string() + " line 2: unknown option 'token'");
  {
    std::ofstream conf(path);
    conf << "allow-insecure-http\nverbose\n";
  }
  o = Parse(With({"--config", path.string()}));
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(o->allow_insecure_http);
  EXPECT_TRUE(o->verbose);
  {
    std::ofstream conf(path);
    conf << "verbose yes\n";
  }
  EXPECT_EQ(Parse(With({"--config", path.string()})).status().message(),
            "--config " + path.string() + " line 1: verbose takes no value");
  std::filesystem::remove(path);
  EXPECT_EQ(Parse({"--config", "/nonexistent/conf"}).status().message(), "--config: cannot read /nonexistent/conf");
}

TEST(AllocOptions, TheLaunchersGetTheSameConsentToPlainHttp) {
  auto o = Parse(With({"--allow-insecure-http", "--launcher-arg", "--wait-ms", "--launcher-arg", "1000"}));
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->launch.launcher_args, (std::vector<std::string>{"--wait-ms", "1000", "--allow-insecure-http"}));
  EXPECT_TRUE(Parse(kBase)->launch.launcher_args.empty());
}

TEST(AllocOptions, HelpStopsReading) {
  auto o = Parse({"--help", "--bogus"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
}

}  // namespace
}  // namespace scimesh::alloc
