// Spawning a node agent and speaking its line protocol.
#include "launcher/step/agent_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "protocol/util/child_process.h"
#include "protocol/util/token.h"

namespace scimesh::launcher {
namespace {

constexpr auto kWriteTimeout = std::chrono::seconds(5);

}  // namespace

Result<AgentChannel> AgentChannel::Spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) return Status::InvalidArgument("no agent command");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Status::Io(std::string("socketpair: ") + std::strerror(errno));
  }
  UniqueFd socket(sv[0]), theirs(sv[1]);
  ChildSpec spec;
  spec.argv = argv;
  spec.unset = IsTokenVariable;  // an agent never talks to the coordinator
  spec.stdin_fd = spec.stdout_fd = theirs.get();
  spec.stderr_fd = STDERR_FILENO;  // the agent's warnings reach the launcher's log
  auto pid = SpawnChild(spec);
  if (!pid.ok()) {
    std::string why = pid.status().message();  // "cannot start 'scimesh-agent': No such file or directory"
    const std::string start = "cannot start ";
    why = why.starts_with(start) ? start + "the agent " + why.substr(start.size()) : "cannot start the agent: " + why;
    return Status::NotFound(why);
  }
  ::fcntl(socket.get(), F_SETFL, ::fcntl(socket.get(), F_GETFL) | O_NONBLOCK);
  return AgentChannel(*pid, std::move(socket));
}

AgentChannel::AgentChannel(AgentChannel&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      socket_(std::move(o.socket_)),
      direct_(std::move(o.direct_)),
      lines_(std::move(o.lines_)),
      direct_lines_(std::move(o.direct_lines_)),
      pending_(std::move(o.pending_)),
      eof_(o.eof_),
      write_closed_(o.write_closed_),
      exit_(o.exit_) {}

AgentChannel::~AgentChannel() {
  if (pid_ > 0 && !exit_) {
    ::kill(pid_, SIGKILL);
    (void)WaitChild(pid_);
  }
}

void AgentChannel::AttachDirect(UniqueFd socket) {
  ::fcntl(socket.get(), F_SETFL, ::fcntl(socket.get(), F_GETFL) | O_NONBLOCK);
  direct_ = std::move(socket);
}

void AgentChannel::Drain(int fd, agent::LineSplitter& lines) {
  char buf[65536];
  while (!eof_) {
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      eof_ = true;  // EOF, or the socket broke: either way the agent is gone
      break;
    }
    for (auto& line : lines.Push(std::string_view(buf, static_cast<size_t>(n)))) pending_.push_back(std::move(line));
  }
}

Result<std::vector<AgentEvent>> AgentChannel::ReadEvents() {
  Drain(socket_.get(), lines_);
  if (direct_.valid()) Drain(direct_.get(), direct_lines_);
  std::vector<AgentEvent> events;
  while (!pending_.empty()) {
    const auto& line = pending_.front();
    if (line.oversize || line.text.empty()) {
      if (!events.empty()) break;  // the error goes out on the next call
      pending_.pop_front();
      return Status::InvalidArgument("agent: an event line was empty or longer than 1 MiB");
    }
    auto event = agent::ParseAgentEvent(line.text);
    if (!event.ok()) {
      if (!events.empty()) break;
      pending_.pop_front();
      return event.status();
    }
    events.push_back(std::move(*event));
    pending_.pop_front();
  }
  return events;
}

Result<std::vector<AgentEvent>> AgentChannel::WaitEvents(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto events = ReadEvents();
    if (!events.ok() || !events->empty() || eof_) return events;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return events;
    pollfd p[2] = {{socket_.get(), POLLIN, 0}, {direct_.get(), POLLIN, 0}};
    ::poll(p, direct_.valid() ? 2 : 1, static_cast<int>(std::min<int64_t>(left.count(), 60000)));
  }
}

Status AgentChannel::Write(std::string_view bytes) {
  if (write_closed_) return Status::Cancelled("agent: the channel was closed");
  const auto until = std::chrono::steady_clock::now() + kWriteTimeout;
  const int fd = direct_.valid() ? direct_.get() : socket_.get();
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Status::Timeout("agent: not reading its commands");
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
      continue;
    }
    return Status::Unavailable(std::string("agent: channel broken: ") + std::strerror(errno));
  }
  return Status::Ok();
}

Status AgentChannel::Start(const AgentStart& start) { return Write(agent::AgentCommandLine(start)); }

Status AgentChannel::Signal(std::string_view id, int sig) {
  return Write(agent::AgentCommandLine(agent::AgentSignal{std::string(id), sig}));
}

Status AgentChannel::Stop(std::string_view id, std::chrono::milliseconds grace) {
  return Write(agent::AgentCommandLine(agent::AgentStop{std::string(id), grace.count()}));
}

Status AgentChannel::Ping() { return Write(agent::AgentCommandLine(agent::AgentPing{})); }

Status AgentChannel::SendLine(std::string_view line) { return Write(std::string(line) + "\n"); }

void AgentChannel::Close() {
  if (!write_closed_) {
    ::shutdown(socket_.get(), SHUT_WR);
    if (direct_.valid()) ::shutdown(direct_.get(), SHUT_WR);
  }
  write_closed_ = true;
}

std::optional<int> AgentChannel::WaitExit(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!exit_ && pid_ > 0) {
    if (auto e = PollChild(pid_)) {
      exit_ = e->ShellStatus();
      break;
    }
    if (std::chrono::steady_clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return exit_;
}

}  // namespace scimesh::launcher
