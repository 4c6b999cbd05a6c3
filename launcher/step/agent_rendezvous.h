// AgentRendezvous: where the node agents connect back to the launcher for
// their direct channel (docs/agent.md "The direct channel"). It listens on an
// ephemeral TCP port on every address, mints one secret per node agent, and
// hands a connection to its node once the connection's first line is that
// node's secret.
//
// The port is open to the network, so every connection is hostile until it
// proves itself: a first line that is not an expected secret, longer than a
// secret, or not sent within the hello timeout closes the connection; at
// most `max_pending` connections wait at once, and a new one beyond that
// evicts the one that has waited longest (an agent sends its secret as it
// connects, so idle connections cannot keep it out); a secret is good for
// one connection; secrets are compared in constant time. Refusals are
// logged at most once per `warn_every` per kind, with the count since the
// last line. Once no agent is expected any more, the port is closed.
//
// Not thread-safe: the event loop's thread only (callbacks run there too).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "launcher/event_loop.h"
#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::launcher {

class AgentRendezvous {
 public:
  struct Options {
    std::chrono::milliseconds hello_timeout{10000};
    size_t max_pending = 16;
    std::chrono::milliseconds warn_every{10000};
  };
  // A proven connection (non-blocking, TCP_NODELAY) for `node`'s agent; the
  // bytes after the secret line are still unread.
  using OnAgent = std::function<void(const std::string& node, UniqueFd socket)>;

  // Listens on an ephemeral port: IPv6 with IPv4 mapped, else IPv4 only.
  static Result<std::unique_ptr<AgentRendezvous>> Open(EventLoop& loop, OnAgent on_agent, Options options);
  static Result<std::unique_ptr<AgentRendezvous>> Open(EventLoop& loop, OnAgent on_agent) {
    return Open(loop, std::move(on_agent), Options());
  }
  ~AgentRendezvous();
  AgentRendezvous(const AgentRendezvous&) = delete;
  AgentRendezvous& operator=(const AgentRendezvous&) = delete;

  uint16_t port() const { return port_; }
  // Still accepting connections (some agent is expected, or none was yet).
  bool listening() const { return listener_.valid(); }

  // A new secret (kDirectSecretChars hex digits) for `node`'s agent, valid
  // for one connection; it replaces one given before.
  Result<std::string> Expect(const std::string& node);
  // `node`'s agent will not connect (it is gone, or it stayed on stdio).
  void Forget(const std::string& node);

 private:
  struct Pending {
    UniqueFd fd;
    std::string line;
    uint64_t timer = 0;
    uint64_t arrived = 0;  // accept order: the smallest has waited longest
  };
  // One kind of refusal's log line, rate-limited.
  struct Warning {
    std::chrono::steady_clock::time_point last{};
    uint64_t unsaid = 0;
  };
  AgentRendezvous(EventLoop& loop, OnAgent on_agent, Options options, UniqueFd listener, uint16_t port)
      : loop_(loop), on_agent_(std::move(on_agent)), options_(options), listener_(std::move(listener)), port_(port) {}
  void OnAccept();
  void OnHello(int fd);
  void Drop(int fd);
  void EvictOldest();
  void CloseIfDone();
  void Warn(const std::string& what);

  EventLoop& loop_;
  const OnAgent on_agent_;
  const Options options_;
  UniqueFd listener_;
  const uint16_t port_;
  std::map<std::string, std::string> expected_;  // node -> secret
  std::map<int, Pending> pending_;
  uint64_t accepted_ = 0;
  std::map<std::string, Warning> warnings_;
};

}  // namespace scimesh::launcher
