// HttpServer: routes, the libmicrohttpd daemon's start and graceful stop, and
// running handlers on the work queues.
#include "coordinator/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <spdlog/spdlog.h>

#include "coordinator/api_error.h"
#include "coordinator/http_exchange.h"
#include "coordinator/responses.h"
#include "protocol/util/log.h"

namespace scimesh::coordinator {

HttpServer::HttpServer(HttpServerOptions options)
    : options_(std::move(options)),
      limits_(options_.caps),
      queue_(options_.threads),
      uploads_(options_.upload_threads),
      holds_(queue_) {}

HttpServer::~HttpServer() {
  Stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void HttpServer::Route(std::string method, const std::string& pattern, Lane lane, Handler handler) {
  routes_.push_back(RouteEntry{std::move(method), pattern, std::regex(pattern), lane, std::move(handler)});
}

void HttpServer::OnAnswered(std::function<void(const HttpRequest&, int, const std::string&)> observer) {
  observer_ = std::move(observer);
}

const HttpServer::RouteEntry* HttpServer::Match(HttpRequest& req) const {
  for (const RouteEntry& r : routes_) {
    std::smatch m;
    if (r.method != req.method || !std::regex_match(req.path, m, r.re)) continue;
    req.matches.assign(m.begin(), m.end());
    return &r;
  }
  return nullptr;
}

void HttpServer::RunHandler(const std::shared_ptr<Exchange>& ex) {
  HttpResponse res;
  ContentReader reader = [](const BodyChunk&) { return true; };
  if (ex->channel) reader = [ch = ex->channel.get()](const BodyChunk& chunk) { return ch->Read(chunk); };
  try {
    (*ex->handler)(ex->req, res, reader);
  } catch (const std::exception& e) {
    spdlog::error("http: a handler threw on {} {}: {}", log::EscapeForLog(ex->req.method), ex->route,
                  log::EscapeForLog(e.what()));
    res = HttpResponse{};
  } catch (...) {
    spdlog::error("http: a handler threw on {} {}", log::EscapeForLog(ex->req.method), ex->route);
    res = HttpResponse{};
  }
  if (ex->channel) ex->channel->Abandon();
  if (res.poll) {
    // A long poll that found nothing: held without a thread until it answers.
    HttpResponse::Poll poll = std::move(res.poll);
    holds_.Poll(res.until, [this, ex, poll = std::move(poll)](bool shutting_down) {
      HttpResponse answer;
      if (!poll(answer, shutting_down)) return false;
      Answered(ex, std::move(answer));
      return true;
    });
    return;
  }
  Answered(ex, std::move(res));
}

void HttpServer::Answered(const std::shared_ptr<Exchange>& ex, HttpResponse res) {
  if (res.status == 0) {
    ApiError e = ApiError::FromStatus(Status::Internal("no answer"));
    res.status = e.http_status;
    res.set_content(ToJson(e), "application/json");
  }
  {
    std::lock_guard<std::mutex> lock(ex->mu);
    ex->res = std::move(res);
    ex->answered = true;
  }
  ex->Resume();
}

Status HttpServer::Bind() {
  // A numeric address of either family (":" in it: IPv6), never a name.
  addrinfo hints{};
  hints.ai_family = options_.host.find(':') != std::string::npos ? AF_INET6 : AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options_.port);
  if (::getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
    return Status::InvalidArgument("--listen: " + options_.host + " is not an " +
                                   (hints.ai_family == AF_INET6 ? "IPv6" : "IPv4") + " address");
  }
  sockaddr_storage addr{};
  const socklen_t len = found->ai_addrlen;
  std::memcpy(&addr, found->ai_addr, len);
  ::freeaddrinfo(found);
  const std::string where = "cannot listen on " + options_.host + ":" + port;
  listen_fd_ = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return Status::Unavailable(where + ": " + std::strerror(errno));
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (addr.ss_family == AF_INET6) ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(listen_fd_, 1024) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    listen_fd_ = -1;
    return Status::Unavailable(where + ": " + std::strerror(err));
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return Status::Ok();
}

Status HttpServer::Start() {
  if (listen_fd_ < 0) SCIMESH_RETURN_IF_ERROR(Bind());
  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  const bool tls = !options_.tls_cert_pem.empty();
  if (tls) flags |= MHD_USE_TLS;
  // The hard limit: past it libmicrohttpd closes at once; below it, past the
  // caps, ConnectionLimits answers 503 or closes an older connection.
  const unsigned hard_limit =
      static_cast<unsigned>(options_.caps.max_connections + options_.caps.max_unauthenticated + 256);
  limits_.Start();
  holds_.Start();
  // GnuTLS priorities: TLS 1.2 and 1.3 only, forward-secret key exchange
  // only (PFS: NORMAL without static RSA), AEAD ciphers only (no CBC).
  static constexpr char kTlsPriorities[] =
      "PFS:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305";
  MHD_OptionItem tls_options[] = {
      {MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(options_.tls_cert_pem.c_str())},
      {MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(options_.tls_key_pem.c_str())},
      {MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char*>(kTlsPriorities)},
      {MHD_OPTION_END, 0, nullptr},
  };
  constexpr size_t kTlsOptionCount = 3;
  daemon_ = MHD_start_daemon(
      flags, 0, &ServerCallbacks::Accept, this, &ServerCallbacks::Access, this,
      MHD_OPTION_LISTEN_SOCKET, listen_fd_,
      MHD_OPTION_CONNECTION_LIMIT, hard_limit,
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(options_.idle_timeout_s),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(64 * 1024),
      MHD_OPTION_NOTIFY_COMPLETED, &ServerCallbacks::Completed, this,
      MHD_OPTION_NOTIFY_CONNECTION, &ServerCallbacks::Connection, this,
      MHD_OPTION_EXTERNAL_LOGGER, &ServerCallbacks::Log, this,
      MHD_OPTION_ARRAY, tls ? tls_options : tls_options + kTlsOptionCount,
      MHD_OPTION_END);
  if (daemon_ == nullptr) {
    holds_.Stop();
    limits_.Stop();
    return Status::Unavailable(tls ? "cannot start HTTPS: the TLS certificate or key was refused"
                                   : "cannot start the HTTP server");
  }
  listen_fd_ = -1;  // the daemon's now
  return Status::Ok();
}

void HttpServer::Stop() {
  if (daemon_ == nullptr || stopped_) return;
  stopped_ = true;
  stopping_.store(true);
  // No new connections; held claims answered (empty), as a stop always did.
  const MHD_socket listener = MHD_quiesce_daemon(daemon_);
  if (listener != MHD_INVALID_SOCKET) ::close(listener);
  holds_.Stop();
  // In-flight handlers finish and their answers go out (bounded: a client
  // that does not read its answer is not waited for).
  queue_.Drain();
  uploads_.Drain();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
  limits_.Stop();
}

}  // namespace scimesh::coordinator
