// Connection caps, the head deadline and the body rate, and their watchdog.
#include "coordinator/http_connection_limits.h"

#include <sys/socket.h>

#include <algorithm>

#include <spdlog/spdlog.h>

namespace scimesh::coordinator {
namespace {
// How often the watchdog looks; a deadline is enforced within this much.
constexpr auto kTick = std::chrono::milliseconds(250);
// Connections past both caps still accepted (to be answered 503, or to make
// an older unauthenticated one close).
constexpr int64_t kRefusalMargin = 256;
}  // namespace

ConnectionLimits::ConnectionLimits(ConnectionCaps caps, const Clock& clock) : caps_(caps), clock_(clock) {}

ConnectionLimits::~ConnectionLimits() { Stop(); }

void ConnectionLimits::Start() {
  watchdog_.Start([this] { Watch(); });
}

void ConnectionLimits::Stop() { watchdog_.Stop(); }

bool ConnectionLimits::Acceptable() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(conns_.size()) < caps_.max_connections + caps_.max_unauthenticated + kRefusalMargin;
}

void ConnectionLimits::Opened(Id id, int fd, const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t order = next_order_++;
  conns_[id] = Conn{fd, address, Phase::kHead, clock_.Now(), order};
  unauthenticated_[order] = id;
  by_address_[address][order] = id;
  // The newest is never the oldest: at least one is kept per cap.
  while (static_cast<int64_t>(by_address_[address].size()) > std::max<int64_t>(1, caps_.max_per_address)) {
    CutOldest(by_address_[address]);
  }
  while (static_cast<int64_t>(unauthenticated_.size()) > std::max<int64_t>(1, caps_.max_unauthenticated)) {
    CutOldest(unauthenticated_);
  }
}

bool ConnectionLimits::Authenticated(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(id);
  if (it == conns_.end() || it->second.cut) return false;
  Conn& c = it->second;
  if (c.authenticated) return true;
  if (authenticated_ >= caps_.max_connections) return false;
  Unlist(c);
  c.authenticated = true;
  ++authenticated_;
  return true;
}

void ConnectionLimits::Unlist(const Conn& c) {
  unauthenticated_.erase(c.order);
  auto a = by_address_.find(c.address);
  if (a == by_address_.end()) return;
  a->second.erase(c.order);
  if (a->second.empty()) by_address_.erase(a);
}

void ConnectionLimits::Cut(Conn& c) {
  // The socket stays open (the server closes it and then calls Closed(),
  // which waits for this lock), so the fd cannot be reused under us.
  if (!c.authenticated) Unlist(c);
  c.cut = true;
  c.phase = Phase::kExempt;
  if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);
}

void ConnectionLimits::CutOldest(std::map<uint64_t, Id>& among) {
  auto it = conns_.find(among.begin()->second);
  ++closed_room_;  // counted before the cut: whoever sees the cut sees it counted
  Cut(it->second);  // erases it from `among` (and may erase `among` itself: callers re-read sizes)
}

void ConnectionLimits::HeadArrived(Id id) { Enter(id, Phase::kBody); }

void ConnectionLimits::Enter(Id id, Phase phase) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  it->second.phase = phase;
  it->second.since = clock_.Now();
  it->second.body_bytes = 0;
}

void ConnectionLimits::BodyArrived(Id id, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(id);
  if (it != conns_.end()) it->second.body_bytes += bytes;
}

void ConnectionLimits::Exempt(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(id);
  if (it != conns_.end()) it->second.phase = Phase::kExempt;
}

void ConnectionLimits::RequestDone(Id id) { Enter(id, Phase::kHead); }

void ConnectionLimits::Closed(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  const Conn& c = it->second;
  if (c.authenticated) {
    --authenticated_;
  } else if (!c.cut) {
    Unlist(c);
  }
  conns_.erase(it);
}

int64_t ConnectionLimits::open() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(conns_.size());
}

int64_t ConnectionLimits::HeadTimeout(const Conn& c) const {
  return c.authenticated ? caps_.head_timeout_ms : std::min(caps_.head_timeout_ms, caps_.unauthenticated_head_timeout_ms);
}

bool ConnectionLimits::Late(const Conn& c, MonoTime now) const {
  const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - c.since).count();
  switch (c.phase) {
    case Phase::kHead:
      return elapsed_ms > HeadTimeout(c);
    case Phase::kBody: {
      // The head deadline's allowance, then the minimum rate.
      const int64_t owed = (elapsed_ms - HeadTimeout(c)) * caps_.body_min_rate / 1000;
      return owed > 0 && static_cast<int64_t>(c.body_bytes) < owed;
    }
    case Phase::kExempt:
      return false;
  }
  return false;
}

void ConnectionLimits::CutLate() {
  std::lock_guard<std::mutex> lock(mu_);
  CutLateLocked();
}

void ConnectionLimits::CutLateLocked() {
  const MonoTime now = clock_.Now();
  for (auto& [id, c] : conns_) {
    if (!Late(c, now)) continue;
    // Counted before the cut: whoever sees the cut sees it counted.
    (c.phase == Phase::kHead ? closed_head_ : closed_body_)++;
    Cut(c);  // exempt from now on: cut once
  }
}

void ConnectionLimits::Watch() {
  // Cuts are logged as counts at most every kReportEvery: an attack of
  // thousands of tricklers must not flood the log.
  constexpr auto kReportEvery = std::chrono::seconds(10);
  uint64_t reported_head = 0, reported_body = 0, reported_room = 0;
  MonoTime last_report = clock_.Now();
  while (watchdog_.WaitFor(kTick)) {
    std::lock_guard<std::mutex> lock(mu_);
    CutLateLocked();
    const MonoTime now = clock_.Now();
    if (now - last_report >= kReportEvery &&
        (closed_head_ != reported_head || closed_body_ != reported_body || closed_room_ != reported_room)) {
      spdlog::info("http: closed {} connections whose request head missed its deadline, {} whose body was "
                   "slower than the minimum rate and {} without a key to make room for newer ones",
                   closed_head_ - reported_head, closed_body_ - reported_body, closed_room_ - reported_room);
      reported_head = closed_head_;
      reported_body = closed_body_;
      reported_room = closed_room_;
      last_report = now;
    }
  }
}

}  // namespace scimesh::coordinator
