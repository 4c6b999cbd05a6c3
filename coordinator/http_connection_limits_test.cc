// ConnectionLimits: the two budgets (with and without a known key), the caps
// per address and in total, and a connection that stays within a deadline is
// never cut.
#include "coordinator/http_connection_limits.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace scimesh::coordinator {
namespace {

// A connection's id: the address of a distinct object.
const void* Key(const int& n) { return &n; }

// A socket pair whose peer end tells whether the coordinator's end was cut.
struct Pipe {
  int ours = -1, peer = -1;
  Pipe() {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ours = sv[0];
    peer = sv[1];
  }
  ~Pipe() {
    ::close(ours);
    ::close(peer);
  }
  // The coordinator's end was shut down (the peer reads EOF at once).
  bool cut() const {
    char byte;
    return ::recv(peer, &byte, 1, MSG_DONTWAIT) == 0;
  }
};

// The attack: 1,100 connections from one address kept every worker on that
// host out (503). Past the per-address cap the oldest goes, not the newest.
TEST(ConnectionLimits, PastThePerAddressCapTheOldestOfThatAddressCloses) {
  ConnectionCaps caps;
  caps.max_per_address = 2;
  ConnectionLimits limits(caps);
  Pipe a, b, c, other;
  limits.Opened(&a, a.ours, "10.0.0.1");
  limits.Opened(&b, b.ours, "10.0.0.1");
  limits.Opened(&other, other.ours, "10.0.0.2");
  EXPECT_FALSE(a.cut());
  limits.Opened(&c, c.ours, "10.0.0.1");
  EXPECT_TRUE(a.cut()) << "the oldest of 10.0.0.1";
  EXPECT_FALSE(b.cut());
  EXPECT_FALSE(c.cut()) << "the newest is kept";
  EXPECT_FALSE(other.cut()) << "another address has its own count";
  EXPECT_EQ(limits.closed_for_room(), 1u);
  EXPECT_TRUE(limits.Authenticated(&c)) << "the newest may still present its key";
}

// The attack: 9,000 keyless connections spread over 10 addresses, each under
// the per-address cap, filled the one cap workers shared.
TEST(ConnectionLimits, KeylessConnectionsFromManyAddressesNeverCrowdOutAuthenticatedOnes) {
  ConnectionCaps caps;
  caps.max_unauthenticated = 4;
  caps.max_connections = 2;
  ConnectionLimits limits(caps);
  Pipe worker;
  limits.Opened(&worker, worker.ours, "10.0.9.9");
  ASSERT_TRUE(limits.Authenticated(&worker));
  std::vector<std::unique_ptr<Pipe>> flood;
  for (int i = 0; i < 40; ++i) {
    flood.push_back(std::make_unique<Pipe>());
    limits.Opened(flood.back().get(), flood.back()->ours, "10.0.0." + std::to_string(i % 10));
  }
  EXPECT_FALSE(worker.cut()) << "an authenticated connection is never closed to make room";
  int open = 0;
  for (const auto& p : flood) open += p->cut() ? 0 : 1;
  EXPECT_EQ(open, 4) << "the newest four keyless connections";
  EXPECT_FALSE(flood.back()->cut());
  // A fresh worker connection gets in and is promoted however many came before.
  Pipe fresh;
  limits.Opened(&fresh, fresh.ours, "10.0.0.3");
  EXPECT_TRUE(limits.Authenticated(&fresh));
  EXPECT_FALSE(fresh.cut());
  for (const auto& p : flood) limits.Closed(p.get());
  EXPECT_EQ(limits.open(), 2);
}

TEST(ConnectionLimits, PastTheAuthenticatedCapAKeyDoesNotPromote) {
  ConnectionCaps caps;
  caps.max_connections = 1;
  ConnectionLimits limits(caps);
  Pipe a, b;
  limits.Opened(&a, a.ours, "10.0.0.1");
  limits.Opened(&b, b.ours, "10.0.0.2");
  EXPECT_TRUE(limits.Authenticated(&a));
  EXPECT_TRUE(limits.Authenticated(&a)) << "once is enough";
  EXPECT_FALSE(limits.Authenticated(&b)) << "answered 503";
  limits.Closed(&a);
  EXPECT_TRUE(limits.Authenticated(&b)) << "room again once one closed";
}

TEST(ConnectionLimits, WellPastBothCapsNewConnectionsAreNotAcceptedAtAll) {
  ConnectionCaps caps;
  caps.max_connections = 1;
  caps.max_unauthenticated = 1;
  ConnectionLimits limits(caps);
  std::vector<int> ids(258);
  for (int& id : ids) {
    ASSERT_TRUE(limits.Acceptable());
    limits.Opened(&id, -1, "10.0.0.1");
  }
  EXPECT_FALSE(limits.Acceptable()) << "the descriptors the coordinator must keep";
}

// A connection without a known key has the shorter head deadline.
TEST(ConnectionLimits, TheWatchdogGivesAKeylessConnectionTheShorterHeadDeadline) {
  ConnectionCaps caps;
  caps.head_timeout_ms = 60000;
  caps.unauthenticated_head_timeout_ms = 100;
  ::scimesh::ManualClock clock;
  ConnectionLimits limits(caps, clock);
  Pipe keyless, keyed;
  limits.Opened(&keyless, keyless.ours, "10.0.0.1");
  limits.Opened(&keyed, keyed.ours, "10.0.0.1");
  ASSERT_TRUE(limits.Authenticated(&keyed));
  limits.RequestDone(&keyed);  // waits for its next head, with the long deadline
  clock.Advance(std::chrono::milliseconds(100));
  limits.CutLate();
  EXPECT_FALSE(keyless.cut()) << "on its deadline, not past it";
  clock.Advance(std::chrono::milliseconds(1));
  limits.CutLate();
  EXPECT_TRUE(keyless.cut());
  EXPECT_EQ(limits.closed_for_head(), 1u);
  EXPECT_FALSE(keyed.cut());
}

TEST(ConnectionLimits, TheWatchdogCutsALateHeadAndSparesAnExemptConnection) {
  ConnectionCaps caps;
  caps.head_timeout_ms = 100;
  ::scimesh::ManualClock clock;
  ConnectionLimits limits(caps, clock);
  int late[2], exempt[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, late), 0);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, exempt), 0);
  int a = 1, b = 2;
  limits.Opened(Key(a), late[0], "10.0.0.1");
  limits.Opened(Key(b), exempt[0], "10.0.0.1");
  limits.HeadArrived(Key(b));
  limits.Exempt(Key(b));  // a held claim
  limits.Start();
  clock.Advance(std::chrono::milliseconds(101));
  char byte;
  // The watchdog thread cuts it on its next pass: the peer of the cut socket
  // reads EOF. Bounded only so a broken watchdog fails instead of hanging.
  timeval tv{30, 0};
  ::setsockopt(late[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  EXPECT_EQ(::recv(late[1], &byte, 1, 0), 0);
  EXPECT_EQ(limits.closed_for_head(), 1u);
  clock.Advance(std::chrono::hours(1));
  limits.CutLate();
  EXPECT_EQ(::send(exempt[1], "x", 1, MSG_NOSIGNAL), 1) << "the exempt connection is still open";
  EXPECT_EQ(limits.closed_for_body(), 0u);
  EXPECT_EQ(limits.closed_for_head(), 1u) << "cut once";
  limits.Stop();
  for (int fd : {late[0], late[1], exempt[0], exempt[1]}) ::close(fd);
}

}  // namespace
}  // namespace scimesh::coordinator
