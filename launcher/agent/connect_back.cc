// The agent connecting back to its launcher.
#include "launcher/agent/connect_back.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "launcher/agent/agent_wire.h"

namespace scimesh::agent {
namespace {

using Clock = std::chrono::steady_clock;

int MsLeft(Clock::time_point until) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
  return static_cast<int>(left < 0 ? 0 : left);
}

bool ValidPort(std::string_view p) {
  int port = 0;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  return ec == std::errc() && end == p.data() + p.size() && port >= 1 && port <= 65535;
}

// One non-blocking connect to `ai`, bounded by `until`.
Result<UniqueFd> ConnectOne(const addrinfo& ai, Clock::time_point until) {
  UniqueFd fd(::socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai.ai_protocol));
  if (!fd.valid()) return Status::Io(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd.get(), ai.ai_addr, ai.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return Status::Unavailable(std::string("connect: ") + std::strerror(errno));
    pollfd p{fd.get(), POLLOUT, 0};
    int n;
    while ((n = ::poll(&p, 1, MsLeft(until))) < 0 && errno == EINTR) {
    }
    if (n == 0) return Status::Timeout("connect: timed out");
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) return Status::Unavailable(std::string("connect: ") + std::strerror(err));
  }
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

Result<ConnectTarget> ParseConnectTarget(std::string_view arg) {
  ConnectTarget t;
  const size_t colon = arg.rfind(':');
  if (colon == std::string_view::npos) {
    t.port = std::string(arg);
    const char* launch_host = std::getenv("SLURM_LAUNCH_NODE_IPADDR");
    t.host = launch_host != nullptr && *launch_host != '\0' ? launch_host : "127.0.0.1";
  } else {
    std::string_view host = arg.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    t.host = std::string(host);
    t.port = std::string(arg.substr(colon + 1));
  }
  if (!ValidPort(t.port)) return Status::InvalidArgument("the port must be a number from 1 to 65535");
  in6_addr probe{};
  in_addr probe4{};
  if (t.host.empty() || (::inet_pton(AF_INET, t.host.c_str(), &probe4) != 1 &&
                         ::inet_pton(AF_INET6, t.host.c_str(), &probe) != 1)) {
    return Status::InvalidArgument("the host must be a numeric IPv4 or IPv6 address");
  }
  return t;
}

Result<Hello> ParseHello(std::string_view line) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return Status::InvalidArgument("the hello line is not '[HOST:]PORT SECRET'");
  SCIMESH_ASSIGN_OR_RETURN(ConnectTarget target, ParseConnectTarget(line.substr(0, space)));
  const std::string_view secret = line.substr(space + 1);
  if (!IsDirectSecret(secret)) return Status::InvalidArgument("the secret is not 64 lowercase hex digits");
  return Hello{std::move(target), std::string(secret)};
}

Result<Hello> ReadHelloLine(int in_fd, std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  std::string line;
  for (;;) {
    pollfd p{in_fd, POLLIN, 0};
    int n = ::poll(&p, 1, MsLeft(until));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Status::Timeout("no hello line on stdin");
    char c = 0;
    ssize_t r = ::read(in_fd, &c, 1);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return Status::Cancelled("stdin ended before the hello line");
    if (c == '\n') break;
    // Read to the end of the line all the same: what follows is a command.
    if (line.size() <= kMaxHelloChars) line.push_back(c);
  }
  if (line.size() > kMaxHelloChars) return Status::InvalidArgument("the hello line is too long");
  return ParseHello(line);
}

Result<UniqueFd> ConnectBack(const ConnectTarget& target, std::string_view secret, std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(target.host.c_str(), target.port.c_str(), &hints, &found); rc != 0) {
    return Status::InvalidArgument(std::string("address: ") + ::gai_strerror(rc));
  }
  Result<UniqueFd> fd = Status::Unavailable("no address");
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    fd = ConnectOne(*ai, until);
    if (fd.ok()) break;
  }
  ::freeaddrinfo(found);
  if (!fd.ok()) return fd.status();
  const std::string hello = std::string(secret) + "\n";
  for (size_t done = 0; done < hello.size();) {
    ssize_t n = ::send(fd->get(), hello.data() + done, hello.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Unavailable(std::string("send: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return fd;
}

}  // namespace scimesh::agent
