// The agent's end of the direct channel (docs/agent.md "The direct channel"):
// with `--connect`, the agent reads "[HOST:]PORT SECRET" from the first line
// of stdin (nothing of it in argv, which every user of the node can read),
// connects to the launcher over TCP (TCP_NODELAY), sends the secret as its
// first line, and from then on carries commands and events on that socket. srun's stdio forwards small writes late (Nagle against a
// delayed acknowledgement: about 40 ms); the direct channel does not.
//
// Stateless functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::agent {

// Where to connect: HOST is a numeric IPv4 or IPv6 address (IPv6 in
// brackets); without it, $SLURM_LAUNCH_NODE_IPADDR (srun's host, where the
// launcher runs), else 127.0.0.1. kInvalidArgument for anything else.
struct ConnectTarget {
  std::string host;
  std::string port;
};
Result<ConnectTarget> ParseConnectTarget(std::string_view arg);

// The first stdin line: where to connect and the secret to send.
struct Hello {
  ConnectTarget target;
  std::string secret;
};
// Parses "[HOST:]PORT SECRET"; kInvalidArgument when either part is bad.
Result<Hello> ParseHello(std::string_view line);

// Reads the hello line from `in_fd` one byte at a time (so no command after
// it is consumed), waiting at most `timeout` in all; at most kMaxHelloChars.
inline constexpr size_t kMaxHelloChars = 128;
Result<Hello> ReadHelloLine(int in_fd, std::chrono::milliseconds timeout);

// Connects (at most `timeout`), sets TCP_NODELAY and sends `secret` + "\n".
// The socket is blocking and close-on-exec.
Result<UniqueFd> ConnectBack(const ConnectTarget& target, std::string_view secret, std::chrono::milliseconds timeout);

}  // namespace scimesh::agent
