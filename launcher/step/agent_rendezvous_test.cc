// AgentRendezvous: the port every node agent's direct channel comes through
// is open to the network. Each test is an attack on it (or the one honest
// agent among attackers) and names the defence it would catch missing.
#include "launcher/step/agent_rendezvous.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "protocol/util/log.h"

namespace scimesh::launcher {
namespace {

using namespace std::chrono_literals;

class AgentRendezvousTest : public ::testing::Test {
 protected:
  void Open(AgentRendezvous::Options options = {}) {
    auto loop = EventLoop::Create();
    ASSERT_TRUE(loop.ok());
    loop_ = std::move(*loop);
    OnLoop([&] {
      auto r = AgentRendezvous::Open(
          *loop_,
          [this](const std::string& node, UniqueFd socket) {
            std::lock_guard<std::mutex> lock(mu_);
            handed_.emplace_back(node, std::move(socket));
          },
          options);
      ASSERT_TRUE(r.ok()) << r.status().message();
      rendezvous_ = std::move(*r);
    });
  }
  void TearDown() override {
    if (loop_) OnLoop([&] { rendezvous_.reset(); });
  }

  // Runs `fn` on the loop's thread and waits for it.
  void OnLoop(const std::function<void()>& fn) {
    std::promise<void> done;
    loop_->Post([&] {
      fn();
      done.set_value();
    });
    done.get_future().wait();
  }
  std::string Expect(const std::string& node) {
    std::string secret;
    OnLoop([&] {
      auto s = rendezvous_->Expect(node);
      ASSERT_TRUE(s.ok()) << s.status().message();
      secret = *s;
    });
    return secret;
  }
  uint16_t port() {
    uint16_t p = 0;
    OnLoop([&] { p = rendezvous_->port(); });
    return p;
  }

  // A client connection to the rendezvous on 127.0.0.1; -1 when refused.
  int Connect() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      return -1;
    }
    fds_.emplace_back(fd);
    return fd;
  }
  static void Send(int fd, const std::string& bytes) {
    ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }
  // True when the launcher closed `fd` (EOF or reset) within `bound`.
  static bool ClosedWithin(int fd, std::chrono::milliseconds bound) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(bound.count())) != 1) return false;
    char c;
    return ::recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
  }
  // The connections handed over so far (waits up to 10 s for `n`).
  std::vector<std::pair<std::string, UniqueFd>> Handed(size_t n) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (handed_.size() >= n || std::chrono::steady_clock::now() > until) return std::move(handed_);
      }
      std::this_thread::sleep_for(10ms);
    }
  }
  // An honest agent: connects, sends its secret at once, and is handed over.
  void ExpectTheAgentGetsIn(const std::string& secret, const std::string& node) {
    Send(Connect(), secret + "\n");
    auto handed = Handed(1);
    ASSERT_EQ(handed.size(), 1u);
    EXPECT_EQ(handed[0].first, node);
  }
  size_t HandedCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return handed_.size();
  }

  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<AgentRendezvous> rendezvous_;
  std::mutex mu_;
  std::vector<std::pair<std::string, UniqueFd>> handed_;
  std::vector<UniqueFd> fds_;
};

TEST_F(AgentRendezvousTest, TheRightSecretHandsTheConnectionToItsNodeWithTheBytesAfterIt) {
  Open();
  const std::string s1 = Expect("n1");
  const std::string s2 = Expect("n2");
  EXPECT_EQ(s1.size(), 64u);
  EXPECT_NE(s1, s2);
  const int fd = Connect();
  ASSERT_GE(fd, 0);
  // The agent's first event follows its secret at once: it must stay unread.
  Send(fd, s2 + "\n{\"ev\":\"ready\"}\n");
  auto handed = Handed(1);
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(handed[0].first, "n2");
  char buf[64] = {};
  pollfd p{handed[0].second.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1);
  const ssize_t n = ::recv(handed[0].second.get(), buf, sizeof buf - 1, 0);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "{\"ev\":\"ready\"}\n");
}

TEST_F(AgentRendezvousTest, AWrongSecretIsClosedAndTheAgentStillGetsIn) {
  Open();
  const std::string secret = Expect("n1");
  std::string wrong = secret;
  wrong[63] = wrong[63] == '0' ? '1' : '0';  // one digit off: compared whole
  const int attacker = Connect();
  Send(attacker, wrong + "\n");
  EXPECT_TRUE(ClosedWithin(attacker, 10s));
  const int shorter = Connect();
  Send(shorter, secret.substr(0, 32) + "\n");
  EXPECT_TRUE(ClosedWithin(shorter, 10s));
  EXPECT_EQ(HandedCount(), 0u);
  ExpectTheAgentGetsIn(secret, "n1");
}

TEST_F(AgentRendezvousTest, ASecretOpensOneConnectionOnly) {
  Open();
  const std::string s1 = Expect("n1");
  Expect("n2");  // keeps the port open after n1 is in
  Send(Connect(), s1 + "\n");
  ASSERT_EQ(Handed(1).size(), 1u);
  // A replay of a secret seen on the wire (or a second agent) is refused.
  const int replay = Connect();
  ASSERT_GE(replay, 0);
  Send(replay, s1 + "\n");
  EXPECT_TRUE(ClosedWithin(replay, 10s));
  EXPECT_EQ(HandedCount(), 0u);
}

TEST_F(AgentRendezvousTest, ASilentConnectionIsClosedAfterTheHelloTimeout) {
  AgentRendezvous::Options options;
  options.hello_timeout = 200ms;
  Open(options);
  const std::string secret = Expect("n1");
  const int silent = Connect();
  Send(silent, secret.substr(0, 10));  // a start, never finished
  EXPECT_TRUE(ClosedWithin(silent, 10s));
  Send(Connect(), secret + "\n");
  EXPECT_EQ(Handed(1).size(), 1u);
}

TEST_F(AgentRendezvousTest, AnOverlongFirstLineIsClosedWithoutBufferingIt) {
  Open();
  const std::string secret = Expect("n1");
  const int flood = Connect();
  // The secret itself with more after it, no newline: never a match.
  Send(flood, secret + std::string(4096, 'a'));
  EXPECT_TRUE(ClosedWithin(flood, 5s));  // not the 10 s hello timeout
  EXPECT_EQ(HandedCount(), 0u);
}

// Another user's idle connections fill the waiting room: the honest agent,
// arriving last, still gets in (the longest waiting is evicted, not the newest).
TEST_F(AgentRendezvousTest, AFullWaitingRoomEvictsTheLongestWaitingNotTheAgent) {
  AgentRendezvous::Options options;
  options.max_pending = 2;
  Open(options);
  const std::string secret = Expect("n1");
  const int a = Connect();
  const int b = Connect();
  ASSERT_TRUE(a >= 0 && b >= 0);
  EXPECT_FALSE(ClosedWithin(a, 100ms));  // both wait for their hello
  const int c = Connect();
  EXPECT_TRUE(ClosedWithin(a, 10s));  // the oldest made room
  EXPECT_FALSE(ClosedWithin(b, 100ms));
  EXPECT_FALSE(ClosedWithin(c, 100ms));
  // The agent connects with its secret into a full room: it gets in.
  ExpectTheAgentGetsIn(secret, "n1");
}

// A flood of wrong secrets writes one warning line per period, with a count.
TEST_F(AgentRendezvousTest, RefusalsAreLoggedAtMostOncePerPeriod) {
  std::ostringstream captured;
  log::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(captured));
  AgentRendezvous::Options options;
  options.warn_every = 60s;
  Open(options);
  const std::string secret = Expect("n1");
  std::string wrong = secret;
  wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
  for (int i = 0; i < 50; ++i) {
    const int fd = Connect();
    ASSERT_GE(fd, 0);
    Send(fd, wrong + "\n");
    EXPECT_TRUE(ClosedWithin(fd, 5s));
  }
  Send(Connect(), secret + "\n");
  EXPECT_EQ(Handed(1).size(), 1u);
  log::SetSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  const std::string logs = captured.str();
  size_t lines = 0;
  for (size_t at = logs.find("wrong secret"); at != std::string::npos; at = logs.find("wrong secret", at + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << logs;
}

TEST_F(AgentRendezvousTest, ThePortClosesOnceNoAgentIsExpected) {
  Open();
  const std::string s1 = Expect("n1");
  Expect("n2");
  const int waiting = Connect();
  ASSERT_GE(waiting, 0);
  Send(Connect(), s1 + "\n");
  ASSERT_EQ(Handed(1).size(), 1u);
  OnLoop([&] { rendezvous_->Forget("n2"); });  // n2's agent stayed on stdio
  bool listening = true;
  OnLoop([&] { listening = rendezvous_->listening(); });
  EXPECT_FALSE(listening);
  EXPECT_EQ(Connect(), -1);                 // nothing listens any more
  EXPECT_TRUE(ClosedWithin(waiting, 10s));  // and nothing waits
}

}  // namespace
}  // namespace scimesh::launcher
