// HttpServer: the coordinator's event-driven HTTP front end, on libmicrohttpd
// (one epoll thread; docs/coordinator.md says why). The connection thread
// only reads heads and bodies and writes answers; a request whose body has
// fully arrived runs on a WorkQueue thread while its connection is suspended,
// a held long-poll claim waits in ClaimHolds without any thread, and health
// is answered on the connection thread itself. ConnectionLimits caps
// connections and enforces the head deadline and the body's minimum rate.
// Routes are added before Start(); Start/Stop from one thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "coordinator/claim_holds.h"
#include "coordinator/http_connection_limits.h"
#include "coordinator/http_message.h"
#include "coordinator/work_queue.h"
#include "protocol/util/status.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace scimesh::coordinator {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  size_t threads = 8;         // handler threads
  size_t upload_threads = 4;  // threads reading streamed bodies (uploads)
  size_t max_body = 1 << 20;  // JSON bodies kept; more is read and dropped (413)
  int64_t idle_timeout_s = 30;  // a connection with no traffic at all (incl. a slow reader)
  ConnectionCaps caps;
  // PEM text; both set: serve HTTPS only.
  std::string tls_cert_pem;
  std::string tls_key_pem;
};

class HttpServer {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpResponse&, const ContentReader&)>;
  // Where a route's handler runs.
  enum class Lane {
    kInline,    // on the connection thread: cheap, never blocks (health)
    kFirst,     // a handler thread, ahead of claims (lease calls, runs, ...)
    kClaims,    // a handler thread, after kFirst (claims)
    kStreamed,  // an upload thread, reading the body as it arrives
  };

  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `pattern`: an ECMAScript regex over the whole path; its groups become
  // HttpRequest::matches[1..].
  void Route(std::string method, const std::string& pattern, Lane lane, Handler handler);
  // Decides, from the head of a request, whether it carries a known key: its
  // connection then moves to the authenticated budget (ConnectionLimits).
  // Runs on the server's connection thread: must be quick. Before Start().
  void AuthenticateConnectionsWith(std::function<bool(const HttpRequest&)> known_key) {
    known_key_ = std::move(known_key);
  }
  // Called once per answered request (for the request log and metrics).
  void OnAnswered(std::function<void(const HttpRequest&, int status, const std::string& route)> observer);

  // Binds and listens (no request is served before Start()); then port()
  // is the bound port.
  Status Bind();
  Status Start();
  int port() const { return port_; }
  // Graceful: stops accepting, answers held claims, lets handlers finish and
  // their answers go out, then closes every connection.
  void Stop();

  // Offerable work may exist: held claims look again (the Ledger's signal).
  void WorkAvailable() { holds_.WorkAvailable(); }
  size_t held_claims() { return holds_.held(); }
  // See ClaimHolds::OnWake; set before Start().
  void OnClaimWake(std::function<void(double seconds)> observer) { holds_.OnWake(std::move(observer)); }
  ConnectionLimits& limits() { return limits_; }

  // The per-request state; public for the libmicrohttpd callbacks only.
  struct Exchange;

 private:
  struct RouteEntry {
    std::string method;
    std::string pattern;
    std::regex re;
    Lane lane;
    Handler handler;
  };
  friend struct ServerCallbacks;

  const RouteEntry* Match(HttpRequest& req) const;
  // Runs the handler of `ex` (a handler thread) and resumes its connection
  // once answered, holding a claim first if the handler asked to.
  void RunHandler(const std::shared_ptr<Exchange>& ex);
  void Answered(const std::shared_ptr<Exchange>& ex, HttpResponse res);

  HttpServerOptions options_;
  std::vector<RouteEntry> routes_;
  std::function<void(const HttpRequest&, int, const std::string&)> observer_;
  std::function<bool(const HttpRequest&)> known_key_;
  ConnectionLimits limits_;
  WorkQueue queue_;
  WorkQueue uploads_;
  ClaimHolds holds_;
  MHD_Daemon* daemon_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int64_t> in_flight_{0};  // requests not yet completed
  // Set when Stop() begins: a request that starts after it is answered 503
  // at once and never suspended, so none is left suspended when the daemon
  // stops (libmicrohttpd aborts the process if one is).
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;
};

}  // namespace scimesh::coordinator
