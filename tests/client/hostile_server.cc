// The hostile loopback server: request parsing, scripted replies, shutdown.
#include "tests/client/hostile_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace scimesh::testing {
namespace {

constexpr size_t kMaxBody = 300u << 20;

std::string ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 307: return "Temporary Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s;
}

}  // namespace

Reply Reply::Json(int status, std::string body, std::vector<std::pair<std::string, std::string>> headers) {
  Reply r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  r.headers.emplace_back("Content-Type", "application/json");
  return r;
}

Reply Reply::Bytes(int status, std::string body, std::string content_type) {
  Reply r;
  r.status = status;
  r.body = std::move(body);
  r.headers.emplace_back("Content-Type", std::move(content_type));
  return r;
}

Reply Reply::Redirect(int status, std::string location) {
  Reply r;
  r.status = status;
  r.headers.emplace_back("Location", std::move(location));
  return r;
}

Reply Reply::Drop() {
  Reply r;
  r.kind = Kind::kDrop;
  return r;
}

Reply Reply::Reset() {
  Reply r;
  r.kind = Kind::kReset;
  return r;
}

Reply Reply::Stall(Millis for_how_long) {
  Reply r;
  r.kind = Kind::kStall;
  r.stall = for_how_long;
  return r;
}

Reply Reply::Raw(std::string bytes, Millis stall_after) {
  Reply r;
  r.kind = Kind::kRaw;
  r.body = std::move(bytes);
  r.stall = stall_after;
  return r;
}

std::function<bool(const RecordedRequest&)> Call(std::string method, std::string path_suffix) {
  return [method = std::move(method), path_suffix = std::move(path_suffix)](const RecordedRequest& r) {
    return r.method == method && r.path.size() >= path_suffix.size() &&
           r.path.compare(r.path.size() - path_suffix.size(), path_suffix.size(), path_suffix) == 0;
  };
}

std::unique_ptr<HostileServer> HostileServer::Start(Handler handler, const std::string& address) {
  std::unique_ptr<HostileServer> s(new HostileServer());
  s->handler_ = std::move(handler);
  s->address_ = address;
  s->listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s->listen_fd_ < 0) throw std::runtime_error("socket");
  int one = 1;
  ::setsockopt(s->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) throw std::runtime_error("address");
  if (::bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) throw std::runtime_error("bind");
  if (::listen(s->listen_fd_, 64) != 0) throw std::runtime_error("listen");
  socklen_t len = sizeof(addr);
  ::getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  s->port_ = ntohs(addr.sin_port);
  if (::pipe2(s->wake_pipe_, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  s->acceptor_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  return s;
}

HostileServer::~HostileServer() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);  // unblock reads
  }
  cv_.notify_all();
  if (::write(wake_pipe_[1], "x", 1) < 0) {
  }
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  ::close(listen_fd_);
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
}

void HostileServer::SetHandler(Handler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  handler_ = std::move(handler);
}

std::vector<RecordedRequest> HostileServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

size_t HostileServer::Count(const std::function<bool(const RecordedRequest&)>& pred) const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<size_t>(std::count_if(requests_.begin(), requests_.end(), pred));
}

bool HostileServer::WaitFor(const std::function<bool(const RecordedRequest&)>& pred, Millis timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return std::any_of(requests_.begin(), requests_.end(), pred); });
}

bool HostileServer::WaitForCount(size_t n, Millis timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return requests_.size() >= n; });
}

bool HostileServer::SleepUnlessStopping(Millis d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return stopping_; });
}

void HostileServer::AcceptLoop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    open_fds_.push_back(fd);
    const int connection = ++connections_;
    threads_.emplace_back([this, fd, connection] { Serve(fd, connection); });
  }
}

void HostileServer::Serve(int fd, int connection) {
  std::string buf;
  char chunk[65536];
  auto close_fd = [&](bool reset) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
    }
    if (reset) {
      linger l{1, 0};  // close with RST instead of FIN
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    }
    ::close(fd);
  };
  for (;;) {
    // Read one request head.
    size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) return close_fd(false);
      buf.append(chunk, static_cast<size_t>(n));
    }
    RecordedRequest req;
    req.connection = connection;
    const std::string head = buf.substr(0, head_end);
    buf.erase(0, head_end + 4);
    size_t line_end = head.find("\r\n");
    const std::string request_line = head.substr(0, line_end);
    auto sp1 = request_line.find(' ');
    auto sp2 = request_line.rfind(' ');
    req.method = request_line.substr(0, sp1);
    req.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    auto q = req.target.find('?');
    req.path = req.target.substr(0, q);
    req.query = q == std::string::npos ? "" : req.target.substr(q + 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      const std::string line = head.substr(pos, e - pos);
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.find_first_not_of(' ', colon + 1);
        req.headers[Lower(line.substr(0, colon))] = v == std::string::npos ? "" : line.substr(v);
      }
      pos = e + 2;
    }
    const size_t length = req.HasHeader("content-length") ? std::stoull(req.Header("content-length")) : 0;
    if (length > kMaxBody) return close_fd(true);
    while (buf.size() < length) {
      ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) return close_fd(false);
      buf.append(chunk, static_cast<size_t>(n));
    }
    req.body = buf.substr(0, length);
    buf.erase(0, length);
    req.at = std::chrono::steady_clock::now();

    Handler handler;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(req);
      handler = handler_;
    }
    cv_.notify_all();
    const Reply reply = handler(req);
    switch (reply.kind) {
      case Reply::Kind::kDrop: return close_fd(false);
      case Reply::Kind::kReset: return close_fd(true);
      case Reply::Kind::kStall:
        SleepUnlessStopping(reply.stall);
        return close_fd(false);
      case Reply::Kind::kRaw:
        WriteAll(fd, reply.body);
        SleepUnlessStopping(reply.stall);
        return close_fd(false);
      case Reply::Kind::kRespond: break;
    }
    std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " " + ReasonPhrase(reply.status) + "\r\n";
    for (const auto& [name, value] : reply.headers) out.append(name).append(": ").append(value).append("\r\n");
    out += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n";
    if (reply.close_after) out += "Connection: close\r\n";
    out += "\r\n";
    // A large body goes in its own send, saving a copy; small ones in one
    // send (two small sends would meet Nagle and delayed ACKs).
    bool sent;
    if (reply.body.size() > (1u << 16)) {
      sent = WriteAll(fd, out) && WriteAll(fd, reply.body);
    } else {
      out += reply.body;
      sent = WriteAll(fd, out);
    }
    if (!sent || reply.close_after) return close_fd(false);
  }
}

}  // namespace scimesh::testing
