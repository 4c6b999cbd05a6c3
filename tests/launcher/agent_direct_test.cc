// The node agent's direct channel (docs/agent.md "The direct channel"): with
// --connect, the agent reads "[HOST:]PORT SECRET" from stdin, connects back over TCP,
// sends the secret and moves its commands and events onto that connection.
// The test plays the launcher's end with a plain listening socket. Each test
// names the attack or the failure it models.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "launcher/agent/agent_wire.h"
#include "tests/launcher/agent_fixture.h"

namespace scimesh::launcher {
namespace {

using namespace agent_testing;

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

class AgentDirectTest : public AgentTest {
 protected:
  void SetUp() override {
    listener_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(listener_.valid());
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(listener_.get(), 4), 0);
    socklen_t len = sizeof a;
    ASSERT_EQ(::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
    port_ = ntohs(a.sin_port);
  }

  // The agent with --connect, before it has said anything.
  AgentChannel SpawnConnecting() {
    auto channel = AgentChannel::Spawn(AgentArgv({"--kill-grace-ms", "300", "--connect"}));
    EXPECT_TRUE(channel.ok()) << channel.status().ToString();
    return std::move(*channel);
  }
  // The first stdin line the launcher writes: where to connect, and the secret.
  std::string Hello(const std::string& secret = kSecret) const {
    return "127.0.0.1:" + std::to_string(port_) + " " + secret;
  }

  // The agent's connection (bounded wait); invalid when none came.
  UniqueFd Accept(std::chrono::milliseconds bound) {
    pollfd p{listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(bound.count())) != 1) return UniqueFd();
    return UniqueFd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  }

  // One line from `fd`, read a byte at a time (bounded wait).
  static std::string ReadLine(int fd) {
    std::string line;
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20000) != 1) return line + "<timeout>";
      char c = 0;
      if (::recv(fd, &c, 1, 0) != 1) return line + "<eof>";
      if (c == '\n') return line;
      line.push_back(c);
    }
  }

  // Nothing is waiting on the agent's stdio channel.
  static bool StdioQuiet(const AgentChannel& agent) {
    char c;
    return ::recv(agent.fd(), &c, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && errno == EAGAIN;
  }

  UniqueFd listener_;
  uint16_t port_ = 0;
};

// The channel itself: the secret comes first on the connection, then every
// event (ready, started, exited) on it and none on stdio; commands sent on
// it are served. A step must not inherit the connection: a step holding it
// could forge `exited` events for other steps or start processes.
TEST_F(AgentDirectTest, CommandsAndEventsGoOverTheConnectionAndNoStepInheritsIt) {
  AgentChannel agent = SpawnConnecting();
  ASSERT_TRUE(agent.SendLine(Hello()).ok());
  UniqueFd conn = Accept(kLong);
  ASSERT_TRUE(conn.valid()) << "the agent never connected";
  EXPECT_EQ(ReadLine(conn.get()), kSecret);
  auto ready = agent::ParseAgentEvent(ReadLine(conn.get()));
  ASSERT_TRUE(ready.ok()) << ready.status().message();
  EXPECT_EQ(ready->kind, Kind::kReady);
  agent.AttachDirect(std::move(conn));
  ASSERT_TRUE(agent.Start(Step("fds", "ls -l /proc/$$/fd/ | grep -c socket > sockets.txt; exit 3")).ok());
  AgentEvent started = Next(agent);
  EXPECT_EQ(started.kind, Kind::kStarted) << started.error;
  AgentEvent exited = Next(agent);
  EXPECT_EQ(exited.kind, Kind::kExited);
  EXPECT_EQ(exited.code, 3);
  EXPECT_EQ(TestDir::Read(dir_ / "sockets.txt"), "0\n") << "the step inherited a socket of the agent's";
  EXPECT_TRUE(StdioQuiet(agent)) << "an event came on srun's stdio instead of the direct channel";
  agent.Close();
  EXPECT_EQ(agent.WaitExit(kLong), 0);
}

// Failure modelled: the launcher's end of the direct channel breaks (the
// launcher died; its srun may linger). Its end alone must stop every step,
// SIGTERM first, and end the agent, as stdin's end does.
TEST_F(AgentDirectTest, TheConnectionsEndStopsEveryStepAndTheAgent) {
  AgentChannel agent = SpawnConnecting();
  ASSERT_TRUE(agent.SendLine(Hello()).ok());
  UniqueFd conn = Accept(kLong);
  ASSERT_TRUE(conn.valid());
  EXPECT_EQ(ReadLine(conn.get()), kSecret);
  agent.AttachDirect(std::move(conn));
  EXPECT_EQ(Next(agent).kind, Kind::kReady);
  const auto [leader, grandchild] = StartAndReadPids(agent, TermRecorder("left"));
  ASSERT_GT(grandchild, 0);
  ::shutdown(agent.direct_fd(), SHUT_RDWR);  // stdio stays open
  EXPECT_EQ(agent.WaitExit(kLong), 0);
  EXPECT_TRUE(GoneWithin(leader, 10s));
  EXPECT_TRUE(GoneWithin(grandchild, 10s)) << "a step process outlived the direct channel";
  EXPECT_EQ(TestDir::Read(dir_ / "term.txt"), "term\n") << "the step was not sent SIGTERM first";
}

// Failure modelled: nothing listens where the agent was told to connect (a
// firewall, a launcher whose port closed). The agent says so and serves on
// stdio: `ready` arrives there and steps run.
TEST_F(AgentDirectTest, WithNoOneListeningTheAgentServesOnStdio) {
  listener_.Reset();  // the port is closed: connect is refused
  AgentChannel agent = SpawnConnecting();
  ASSERT_TRUE(agent.SendLine(Hello()).ok());
  EXPECT_EQ(Next(agent).kind, Kind::kReady);
  ASSERT_TRUE(agent.Start(Step("plain", "exit 0")).ok());
  EXPECT_EQ(Next(agent).kind, Kind::kStarted);
  EXPECT_EQ(Next(agent).kind, Kind::kExited);
}

// Attack: a first stdin line that is not "[HOST:]PORT SECRET" (a secret that
// is not hex or too long, a host name, no port). The agent must not send it
// anywhere: it never connects, and serves on stdio.
TEST_F(AgentDirectTest, AHelloLineThatIsNoHelloIsNeverSent) {
  const std::string port = std::to_string(port_);
  for (const std::string& line : {Hello(std::string(64, 'z')), Hello(std::string(kSecret) + "00"),
                                  "localhost:" + port + " " + kSecret, "127.0.0.1:0 " + std::string(kSecret),
                                  std::string(kSecret), "127.0.0.1:" + port + " " + kSecret + std::string(200, 'a')}) {
    queue_.clear();
    AgentChannel agent = SpawnConnecting();
    ASSERT_TRUE(agent.SendLine(line).ok());
    EXPECT_EQ(Next(agent).kind, Kind::kReady) << line;
    EXPECT_FALSE(Accept(200ms).valid()) << "the agent connected with the hello line '" << line << "'";
  }
}

// The port and secret never travel in argv (every user of the node reads
// /proc/PID/cmdline): --connect takes no value, and one given is a usage error.
TEST_F(AgentDirectTest, ConnectWithAValueIsAUsageError) {
  if (std::getenv("SCIMESH_AGENT_PREFIX") != nullptr) GTEST_SKIP() << "srun's exit status stands between";
  for (const char* arg : {"--connect=127.0.0.1:80", "--connect=80"}) {
    auto agent = AgentChannel::Spawn({SCIMESH_AGENT_BIN, arg});
    ASSERT_TRUE(agent.ok());
    EXPECT_EQ(agent->WaitExit(kLong), 2) << arg;
  }
}

}  // namespace
}  // namespace scimesh::launcher
