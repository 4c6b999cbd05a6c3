// Plugstack arguments: defaults, every key, refusals.
#include "plugin/plugin_config.h"

#include <gtest/gtest.h>

namespace scimesh::spank {
namespace {

TEST(PluginConfig, DefaultsWithoutArguments) {
  auto c = ParsePluginArgs({});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->url);
  EXPECT_EQ(c->credentials, Credentials::kJobEnvironment);
  EXPECT_EQ(c->grace.count(), 10);
  EXPECT_EQ(c->poll.count(), 200);
  EXPECT_FALSE(c->require);
  EXPECT_FALSE(c->url.has_value());  // no url=: the plugin never talks to the network
  EXPECT_EQ(c->exit_timeout.count(), 5000);
}

TEST(PluginConfig, EveryKey) {
  auto c = ParsePluginArgs({"url=https://coord.example:8470", "credentials=none", "grace_s=0", "poll_ms=50",
                            "timeout_ms=1500", "exit_timeout_ms=2500", "require=1", "allow_insecure_http=1"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(*c->url, "https://coord.example:8470");
  EXPECT_EQ(c->credentials, Credentials::kNone);
  EXPECT_EQ(c->grace.count(), 0);
  EXPECT_EQ(c->poll.count(), 50);
  EXPECT_EQ(c->call_timeout.count(), 1500);
  EXPECT_EQ(c->exit_timeout.count(), 2500);
  EXPECT_TRUE(c->require);
  EXPECT_TRUE(c->allow_insecure_http);
  EXPECT_NE(DescribeConfig(*c).find("grace_s=0"), std::string::npos);
}

TEST(PluginConfig, RefusesUnknownKeyByName) {
  auto c = ParsePluginArgs({"grace_s=5", "colour=blue"});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("unknown argument 'colour'"), std::string::npos);
}

TEST(PluginConfig, RefusesMalformedValues) {
  for (auto bad : {"grace_s=-1", "grace_s=601", "grace_s=ten", "poll_ms=5", "require=yes", "credentials=root",
                   "url=ftp://x", "url=https://user:pw@host", "timeout_ms=", "nokey", "=3"}) {
    EXPECT_FALSE(ParsePluginArgs({bad}).ok()) << bad;
  }
}

TEST(PluginConfig, KillGraceFromTheJobIsBounded) {
  EXPECT_EQ(ParseKillGraceMs("0").value(), std::chrono::milliseconds(0));
  EXPECT_EQ(ParseKillGraceMs("8000").value(), std::chrono::milliseconds(8000));
  EXPECT_EQ(ParseKillGraceMs("600000").value(), std::chrono::milliseconds(600000));
  for (auto bad : {"600001", "-1", "10s", "", "1e3", "99999999999999999999"}) {
    auto g = ParseKillGraceMs(bad);
    ASSERT_FALSE(g.ok()) << bad;
    EXPECT_NE(g.status().message().find("SCIMESH_KILL_GRACE_MS"), std::string::npos) << g.status().message();
  }
}

TEST(PluginConfig, RefusesRepeatedKey) {
  auto c = ParsePluginArgs({"grace_s=5", "grace_s=6"});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("twice"), std::string::npos);
}

}  // namespace
}  // namespace scimesh::spank
