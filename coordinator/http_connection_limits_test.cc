// ConnectionLimits: the caps per address and in total, and a connection that
// stays within a deadline is never cut.
#include "coordinator/http_connection_limits.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

namespace scimesh::coordinator {
namespace {

// A connection's id: the address of a distinct int.
const void* Key(const int& n) { return &n; }

TEST(ConnectionLimits, PastThePerAddressCapConnectionsAreOverUntilOthersClose) {
  ConnectionCaps caps;
  caps.max_per_address = 2;
  ConnectionLimits limits(caps);
  int a = 1, b = 2, c = 3, d = 4;
  EXPECT_TRUE(limits.Opened(Key(a), -1, "10.0.0.1"));
  EXPECT_TRUE(limits.Opened(Key(b), -1, "10.0.0.1"));
  EXPECT_FALSE(limits.Opened(Key(c), -1, "10.0.0.1")) << "the third from one address";
  EXPECT_TRUE(limits.Opened(Key(d), -1, "10.0.0.2")) << "another address has its own count";
  EXPECT_TRUE(limits.Acceptable("10.0.0.1"));  // still answered 503, not dropped
  limits.Closed(Key(a));
  limits.Closed(Key(c));
  int e = 5;
  EXPECT_TRUE(limits.Opened(Key(e), -1, "10.0.0.1"));
  EXPECT_EQ(limits.open(), 3);
}

TEST(ConnectionLimits, WellPastTheCapsNewConnectionsAreNotAcceptedAtAll) {
  ConnectionCaps caps;
  caps.max_per_address = 1;
  ConnectionLimits limits(caps);
  int a = 1, b = 2;
  limits.Opened(Key(a), -1, "10.0.0.1");
  limits.Opened(Key(b), -1, "10.0.0.1");
  EXPECT_FALSE(limits.Acceptable("10.0.0.1"));
  EXPECT_TRUE(limits.Acceptable("10.0.0.2"));
}

TEST(ConnectionLimits, PastTheTotalCapConnectionsAreOver) {
  ConnectionCaps caps;
  caps.max_connections = 2;
  ConnectionLimits limits(caps);
  int a = 1, b = 2, c = 3;
  EXPECT_TRUE(limits.Opened(Key(a), -1, "10.0.0.1"));
  EXPECT_TRUE(limits.Opened(Key(b), -1, "10.0.0.2"));
  EXPECT_FALSE(limits.Opened(Key(c), -1, "10.0.0.3"));
}

TEST(ConnectionLimits, TheWatchdogCutsALateHeadAndSparesAnExemptConnection) {
  ConnectionCaps caps;
  caps.head_timeout_ms = 100;
  ConnectionLimits limits(caps);
  int late[2], exempt[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, late), 0);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, exempt), 0);
  int a = 1, b = 2;
  limits.Opened(Key(a), late[0], "10.0.0.1");
  limits.Opened(Key(b), exempt[0], "10.0.0.1");
  limits.HeadArrived(Key(b));
  limits.Exempt(Key(b));  // a held claim
  limits.Start();
  char byte;
  // The peer of the cut socket reads EOF; bounded only so a broken watchdog
  // fails instead of hanging.
  timeval tv{30, 0};
  ::setsockopt(late[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  EXPECT_EQ(::recv(late[1], &byte, 1, 0), 0);
  EXPECT_EQ(limits.closed_for_head(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(::send(exempt[1], "x", 1, MSG_NOSIGNAL), 1) << "the exempt connection is still open";
  EXPECT_EQ(limits.closed_for_body(), 0u);
  limits.Stop();
  for (int fd : {late[0], late[1], exempt[0], exempt[1]}) ::close(fd);
}

}  // namespace
}  // namespace scimesh::coordinator
