// Tests of serve settings: defaults, precedence, validation.
#include "coordinator/serve_config.h"

#include <unistd.h>

#include <fstream>
#include <map>

#include <gtest/gtest.h>

namespace scimesh::coordinator {
namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

TEST(ParseServeConfig, DefaultsFollowTheDb) {
  FakeEnv env;
  auto c = ParseServeConfig({"--db", "/x/c.db", "--keys", "/x/keys"}, env.lookup());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->listen_host, "127.0.0.1");
  EXPECT_EQ(c->listen_port, 8470);
  EXPECT_EQ(c->artifact_dir, "/x/c.db.artifacts");
  EXPECT_EQ(c->audit_log, "/x/c.db.audit.log");
  EXPECT_EQ(c->lease_ttl_ms, 30000);
  EXPECT_EQ(c->grace_ms, 30000);  // one TTL
  EXPECT_EQ(c->heartbeat_ms, 10000);
  EXPECT_EQ(c->request_timeout_ms, 30000);
  EXPECT_EQ(c->max_body, 1 << 20);
  // Handler threads: a held claim or a slow connection holds none.
  EXPECT_EQ(c->threads, 32);
  EXPECT_EQ(c->head_timeout_ms, 10000);
  EXPECT_EQ(c->max_connections, 8192);
  EXPECT_EQ(c->max_unauthenticated, 1024);
  EXPECT_EQ(c->max_connections_per_address, 256);
  EXPECT_EQ(c->unauthenticated_timeout_ms, 3000);
  EXPECT_EQ(c->body_min_rate, 4096);
  EXPECT_TRUE(c->tls_cert.empty());
}

TEST(ParseServeConfig, TlsCertificateAndKeyGoTogether) {
  FakeEnv env;
  auto base = std::vector<std::string>{"--db", "/x/c.db", "--keys", "/x/keys"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return ParseServeConfig(args, env.lookup());
  };
  EXPECT_FALSE(with({"--tls-cert", "/x/cert.pem"}).ok());
  EXPECT_FALSE(with({"--tls-key", "/x/key.pem"}).ok());
  auto both = with({"--tls-cert", "/x/cert.pem", "--tls-key", "/x/key.pem"});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->tls_cert, "/x/cert.pem");
  EXPECT_FALSE(with({"--head-timeout-ms", "10"}).ok());
  EXPECT_FALSE(with({"--max-connections-per-address", "0"}).ok());
  EXPECT_FALSE(with({"--max-unauthenticated", "8"}).ok());
  EXPECT_FALSE(with({"--unauthenticated-timeout-ms", "10"}).ok());
}

TEST(ParseServeConfig, FlagsBeatEnvironmentBeatsFile) {
  char path[] = "/tmp/scimesh-config-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << "# a comment\ndb = /file.db\nkeys=/file.keys\nlease-ttl-ms=5000\nheartbeat-ms=1000\n";
  FakeEnv env;
  env.vars["SCIMESH_COORDINATOR_LEASE_TTL_MS"] = "7000";
  auto c = ParseServeConfig({"--config", path, "--heartbeat-ms=2000", "--listen", "127.0.0.1:0"}, env.lookup());
  ::unlink(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->db, "/file.db");
  EXPECT_EQ(c->lease_ttl_ms, 7000);  // env over file
  EXPECT_EQ(c->heartbeat_ms, 2000);  // flag over file
  EXPECT_EQ(c->grace_ms, 7000);
  EXPECT_EQ(c->listen_port, 0);
}

TEST(ParseServeConfig, RefusesWhatCannotWork) {
  FakeEnv env;
  auto base = std::vector<std::string>{"--db", "d", "--keys", "k"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return ParseServeConfig(args, env.lookup());
  };
  EXPECT_FALSE(ParseServeConfig({"--keys", "k"}, env.lookup()).ok());
  EXPECT_FALSE(ParseServeConfig({"--db", "d"}, env.lookup()).ok());
  EXPECT_FALSE(with({"--bogus", "1"}).ok());
  EXPECT_FALSE(with({"--lease-ttl-ms", "abc"}).ok());
  EXPECT_FALSE(with({"--lease-ttl-ms", "1000", "--heartbeat-ms", "1000"}).ok());
  EXPECT_FALSE(with({"--listen", "localhost"}).ok());
  EXPECT_FALSE(with({"--listen", "127.0.0.1:70000"}).ok());
  EXPECT_FALSE(with({"--retry-base-ms", "5000", "--retry-cap-ms", "100"}).ok());
  EXPECT_FALSE(with({"--threads", "2"}).ok());
  EXPECT_FALSE(with({"--log-level", "loud"}).ok());
  EXPECT_FALSE(with({"stray"}).ok());
  EXPECT_TRUE(with({"--public-url", "http://h:1/"}).ok());
  EXPECT_EQ(with({"--public-url", "http://h:1/"})->public_url, "http://h:1");
}

TEST(ParseServeConfig, HelpNeedsNothingElse) {
  FakeEnv env;
  auto c = ParseServeConfig({"--help"}, env.lookup());
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->help);
  EXPECT_NE(ServeUsage().find("--request-timeout-ms"), std::string::npos);
}

}  // namespace
}  // namespace scimesh::coordinator
