// Connection caps, the head deadline and the body rate, and their watchdog.
#include "coordinator/http_connection_limits.h"

#include <sys/socket.h>

#include <spdlog/spdlog.h>

namespace scimesh::coordinator {
namespace {
// How often the watchdog looks; a deadline is enforced within this much.
constexpr auto kTick = std::chrono::milliseconds(250);
// Connections past the total cap still accepted to be answered 503.
constexpr int64_t kRefusalMargin = 256;
}  // namespace

ConnectionLimits::ConnectionLimits(ConnectionCaps caps) : caps_(caps) {}

ConnectionLimits::~ConnectionLimits() { Stop(); }

void ConnectionLimits::Start() { watchdog_ = std::thread([this] { Watch(); }); }

void ConnectionLimits::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

bool ConnectionLimits::Acceptable(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = per_address_.find(address);
  const int64_t mine = it == per_address_.end() ? 0 : it->second;
  return mine < 2 * caps_.max_per_address && static_cast<int64_t>(conns_.size()) < caps_.max_connections + kRefusalMargin;
}

bool ConnectionLimits::Opened(Id id, int fd, const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t mine = ++per_address_[address];
  conns_[id] = Conn{fd, address, Phase::kHead, Clock::now()};
  return mine <= caps_.max_per_address && static_cast<int64_t>(conns_.size()) <= caps_.max_connections;
}

void ConnectionLimits::HeadArrived(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  it->second.phase = Phase::kBody;
  it->second.since = Clock::now();
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

void ConnectionLimits::RequestDone(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  it->second.phase = Phase::kHead;
  it->second.since = Clock::now();
}

void ConnectionLimits::Closed(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  auto a = per_address_.find(it->second.address);
  if (a != per_address_.end() && --a->second <= 0) per_address_.erase(a);
  conns_.erase(it);
}

int64_t ConnectionLimits::open() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(conns_.size());
}

bool ConnectionLimits::Late(const Conn& c, Clock::time_point now) const {
  const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - c.since).count();
  switch (c.phase) {
    case Phase::kHead:
      return elapsed_ms > caps_.head_timeout_ms;
    case Phase::kBody: {
      // The head deadline's allowance, then the minimum rate.
      const int64_t owed = (elapsed_ms - caps_.head_timeout_ms) * caps_.body_min_rate / 1000;
      return owed > 0 && static_cast<int64_t>(c.body_bytes) < owed;
    }
    case Phase::kExempt:
      return false;
  }
  return false;
}

void ConnectionLimits::Watch() {
  // Cuts are logged as counts at most every kReportEvery: an attack of
  // thousands of tricklers must not flood the log.
  constexpr auto kReportEvery = std::chrono::seconds(10);
  uint64_t reported_head = 0, reported_body = 0;
  auto last_report = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, kTick);
    const auto now = Clock::now();
    for (auto& [id, c] : conns_) {
      if (!Late(c, now)) continue;
      // The socket stays open (the server closes it and then calls
      // Closed(), which waits for this lock), so the fd cannot be reused
      // under us. Exempt: cut once.
      // Counted before the cut: whoever sees the cut sees it counted.
      (c.phase == Phase::kHead ? closed_head_ : closed_body_)++;
      ::shutdown(c.fd, SHUT_RDWR);
      c.phase = Phase::kExempt;
    }
    if (now - last_report >= kReportEvery &&
        (closed_head_ != reported_head || closed_body_ != reported_body)) {
      spdlog::info("http: closed {} connections whose request head missed its deadline and {} whose body was "
                   "slower than the minimum rate",
                   closed_head_ - reported_head, closed_body_ - reported_body);
      reported_head = closed_head_;
      reported_body = closed_body_;
      last_report = now;
    }
  }
}

}  // namespace scimesh::coordinator
