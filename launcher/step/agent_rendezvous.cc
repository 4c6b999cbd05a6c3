// The launcher's side of the agents' direct channel: listen, prove, hand over.
#include "launcher/step/agent_rendezvous.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "launcher/agent/agent_wire.h"
#include "protocol/util/log.h"
#include "protocol/util/random_hex.h"

namespace scimesh::launcher {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("launcher"); }

// A listening socket on every address, port chosen by the kernel.
Result<UniqueFd> Listen(uint16_t* port) {
  UniqueFd fd(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.valid()) {
    const int zero = 0;
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) fd.Reset();
  }
  if (!fd.valid()) {  // no IPv6 on this host
    fd = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return Status::Io(std::string("socket: ") + std::strerror(errno));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      return Status::Io(std::string("bind: ") + std::strerror(errno));
    }
  }
  if (::listen(fd.get(), 64) != 0) return Status::Io(std::string("listen: ") + std::strerror(errno));
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    return Status::Io(std::string("getsockname: ") + std::strerror(errno));
  }
  *port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

// Every byte compared, whatever differs first.
bool SameSecret(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

Result<std::unique_ptr<AgentRendezvous>> AgentRendezvous::Open(EventLoop& loop, OnAgent on_agent, Options options) {
  uint16_t port = 0;
  auto listener = Listen(&port);
  if (!listener.ok()) return listener.status();
  std::unique_ptr<AgentRendezvous> r(
      new AgentRendezvous(loop, std::move(on_agent), options, std::move(*listener), port));
  AgentRendezvous* self = r.get();
  SCIMESH_RETURN_IF_ERROR(loop.Watch(self->listener_.get(), [self] { self->OnAccept(); }));
  return r;
}

AgentRendezvous::~AgentRendezvous() {
  for (auto& [fd, p] : pending_) {
    loop_.Unwatch(fd);
    loop_.Cancel(p.timer);
  }
  if (listener_.valid()) loop_.Unwatch(listener_.get());
}

Result<std::string> AgentRendezvous::Expect(const std::string& node) {
  if (!listener_.valid()) return Status::Unavailable("the direct channel's port is closed");
  std::string secret = RandomHex(agent::kDirectSecretChars / 2);
  expected_[node] = secret;
  return secret;
}

void AgentRendezvous::Forget(const std::string& node) {
  if (expected_.erase(node) > 0) CloseIfDone();
}

void AgentRendezvous::OnAccept() {
  for (;;) {
    UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd.valid()) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: no more; anything else: the next readiness tries again
    }
    if (pending_.size() >= options_.max_pending) {
      Warn("more than " + std::to_string(options_.max_pending) +
           " connections waiting to prove themselves; the longest waiting closed");
      EvictOldest();
    }
    const int raw = fd.get();
    if (!loop_.Watch(raw, [this, raw] { OnHello(raw); }).ok()) continue;
    Pending& p = pending_[raw];
    p.fd = std::move(fd);
    p.arrived = ++accepted_;
    p.timer = loop_.After(options_.hello_timeout, [this, raw] {
      Warn("a connection sent no secret within " + std::to_string(options_.hello_timeout.count()) + " ms; closed");
      if (auto late = pending_.find(raw); late != pending_.end()) late->second.timer = 0;
      Drop(raw);
    });
    // An agent's secret is usually there already: proven before anyone can
    // push it out.
    OnHello(raw);
    if (!listener_.valid()) return;  // that was the last agent: the port is closed
  }
}

void AgentRendezvous::EvictOldest() {
  auto oldest = pending_.begin();
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->second.arrived < oldest->second.arrived) oldest = it;
  }
  if (oldest != pending_.end()) Drop(oldest->first);
}

void AgentRendezvous::Warn(const std::string& what) {
  Warning& w = warnings_[what];
  const auto now = std::chrono::steady_clock::now();
  if (w.last != std::chrono::steady_clock::time_point{} && now - w.last < options_.warn_every) {
    ++w.unsaid;
    return;
  }
  if (w.unsaid > 0) {
    Log()->warn("direct channel: {} ({} more since the last such line)", what, w.unsaid);
  } else {
    Log()->warn("direct channel: {}", what);
  }
  w.last = now;
  w.unsaid = 0;
}

void AgentRendezvous::OnHello(int fd) {
  auto it = pending_.find(fd);
  if (it == pending_.end()) return;
  Pending& p = it->second;
  // Only the secret line is read: what follows is the agent's first event.
  char buf[agent::kDirectSecretChars + 1];
  const size_t room = sizeof buf - p.line.size();
  ssize_t n = ::recv(fd, buf, room, MSG_PEEK);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) return Drop(fd);
  const void* nl = std::memchr(buf, '\n', static_cast<size_t>(n));
  const size_t take = nl != nullptr ? static_cast<size_t>(static_cast<const char*>(nl) - buf) + 1 : static_cast<size_t>(n);
  if (::recv(fd, buf, take, 0) != static_cast<ssize_t>(take)) return Drop(fd);
  p.line.append(buf, nl != nullptr ? take - 1 : take);
  if (nl == nullptr) {
    if (p.line.size() >= agent::kDirectSecretChars + 1) {
      Warn("a connection's first line is too long; closed");
      Drop(fd);
    }
    return;
  }
  std::string node;
  for (const auto& [name, secret] : expected_) {
    if (SameSecret(p.line, secret)) node = name;
  }
  if (node.empty()) {
    Warn("a connection sent a wrong secret; closed");
    return Drop(fd);
  }
  UniqueFd socket = std::move(p.fd);
  loop_.Unwatch(fd);
  loop_.Cancel(p.timer);
  pending_.erase(it);
  expected_.erase(node);
  const int one = 1;
  ::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  on_agent_(node, std::move(socket));
  CloseIfDone();
}

void AgentRendezvous::Drop(int fd) {
  auto it = pending_.find(fd);
  if (it == pending_.end()) return;
  loop_.Unwatch(fd);
  loop_.Cancel(it->second.timer);
  pending_.erase(it);  // closes it
}

void AgentRendezvous::CloseIfDone() {
  if (!expected_.empty() || !listener_.valid()) return;
  loop_.Unwatch(listener_.get());
  listener_.Reset();
  while (!pending_.empty()) Drop(pending_.begin()->first);
}

}  // namespace scimesh::launcher
