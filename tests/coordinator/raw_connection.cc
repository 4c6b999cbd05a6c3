// Raw TCP connections for the front end's tests.
#include "raw_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace scimesh::coordinator::testing {

RawConnection::RawConnection(int port, const std::string& from) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  if (!from.empty()) {
    sockaddr_in source{};
    source.sin_family = AF_INET;
    if (::inet_pton(AF_INET, from.c_str(), &source.sin_addr) != 1 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

RawConnection::~RawConnection() { Close(); }

RawConnection::RawConnection(RawConnection&& other) noexcept : fd_(other.fd_), closed_(other.closed_) {
  other.fd_ = -1;
}

RawConnection& RawConnection::operator=(RawConnection&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = other.fd_;
    closed_ = other.closed_;
    other.fd_ = -1;
  }
  return *this;
}

void RawConnection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawConnection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (fd_ >= 0 && sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, 5000) <= 0) return false;
      continue;
    }
    closed_ = true;
    return false;
  }
  return fd_ >= 0;
}

std::string RawConnection::Poll() {
  std::string got;
  char buf[4096];
  while (fd_ >= 0) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      got.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) closed_ = true;
    break;
  }
  return got;
}

std::string RawConnection::ReadUntilClosed(int timeout_ms) {
  std::string got;
  while (fd_ >= 0 && !closed_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) break;
    got += Poll();
  }
  return got;
}

std::string RawConnection::ReadResponse(int timeout_ms, std::string already) {
  std::string got = std::move(already);
  while (fd_ >= 0 && !closed_) {
    size_t head_end = got.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      size_t length = 0;
      size_t at = got.find("Content-Length: ");
      if (at == std::string::npos) at = got.find("content-length: ");
      if (at != std::string::npos && at < head_end) length = std::strtoul(got.c_str() + at + 16, nullptr, 10);
      if (got.size() >= head_end + 4 + length) break;
    }
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) break;
    got += Poll();
  }
  return got;
}

std::string PostRequest(const std::string& path, const std::string& token, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace scimesh::coordinator::testing
