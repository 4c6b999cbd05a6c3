// The serve command: startup checks, the server, signals and graceful shutdown.
#include "coordinator/serve.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "coordinator/artifact_collector.h"
#include "coordinator/artifact_store.h"
#include "coordinator/audit_log.h"
#include "coordinator/database.h"
#include "coordinator/http_api.h"
#include "coordinator/http_server.h"
#include "coordinator/keys.h"
#include "coordinator/ledger.h"
#include "coordinator/metrics.h"
#include "coordinator/metrics_endpoint.h"
#include "coordinator/sweeper.h"
#include "protocol/util/atomic_file.h"
#include "protocol/util/log.h"

namespace scimesh::coordinator {
namespace {

// The coordinator's lines go through the project's sink (protocol/log.h):
// bearer tokens redacted and control characters escaped in every line,
// whatever a caller forgot to escape.
void SetUpLogging(const std::string& level) {
  auto logger = log::For("coordinator");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  log::SetLevel(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// Holds an exclusive lock on <db>.lock for the life of the process, so two
// coordinators never share one database. The kernel drops it on any exit.
Status LockDatabase(const std::string& db, int* fd_out) {
  int fd = ::open((db + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Io("cannot create the database lock file " + db + ".lock: " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return Status::Unavailable("another coordinator is using the database " + db);
  }
  *fd_out = fd;
  return Status::Ok();
}

// Every connection is a descriptor: raise the soft limit to the hard one so
// the connection caps, not the default 1024, bound them.
int64_t RaiseDescriptorLimit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
    ::getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : static_cast<int64_t>(rl.rlim_cur);
}

// Messages name the file, the flag and the cause.
Result<std::string> ReadPem(const std::string& path, const char* what, const char* flag) {
  std::ifstream in(path);
  std::stringstream text;
  if (in) text << in.rdbuf();
  const std::string file = "the TLS " + std::string(what) + " " + path + " (" + flag + ")";
  if (!in) return Status::InvalidArgument("cannot read " + file + ": " + std::strerror(errno));
  if (text.str().empty()) return Status::InvalidArgument(file + " is empty");
  return text.str();
}

int Fail(const Status& s) {
  spdlog::error("cannot start: {}", s.message());
  return 1;
}

// Every thread started from here on inherits the mask; the calling thread
// takes SIGTERM and SIGINT with sigwait.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return signals;
}

// What serve reads and writes besides the database; each refusal names its flag.
struct Stores {
  std::unique_ptr<KeyRing> keys;
  std::unique_ptr<ArtifactStore> artifacts;
  std::unique_ptr<AuditLog> audit;
};

Result<Stores> OpenStores(const ServeConfig& config) {
  Stores stores;
  auto keys = KeyRing::Load(config.keys);
  if (!keys.ok()) return keys.status().WithContext("the keys file " + config.keys + " (--keys)");
  stores.keys = std::move(keys).value();
  if (stores.keys->size() == 0) spdlog::warn("the keys file holds no keys: every call but health will get 401");
  auto artifacts = ArtifactStore::Open(config.artifact_dir, config.max_store_bytes);
  if (!artifacts.ok()) return artifacts.status().WithContext("--artifact-dir " + config.artifact_dir);
  stores.artifacts = std::move(artifacts).value();
  auto audit = AuditLog::Open(config.audit_log);
  if (!audit.ok()) return audit.status().WithContext("--audit-log " + config.audit_log);
  stores.audit = std::move(audit).value();
  return stores;
}

// Lowers the connection caps to what the descriptor limit allows, keeping
// descriptors for the database, logs and artifacts besides connections.
void FitCapsToDescriptors(ConnectionCaps& caps) {
  const int64_t fds = RaiseDescriptorLimit();
  if (fds <= 0 || caps.max_connections + caps.max_unauthenticated + 512 <= fds) return;
  const int64_t asked_keyed = caps.max_connections, asked_keyless = caps.max_unauthenticated;
  const int64_t room = std::max<int64_t>(32, fds - 512);
  caps.max_unauthenticated = std::max<int64_t>(16, std::min(caps.max_unauthenticated, room / 4));
  caps.max_connections = std::max<int64_t>(16, room - caps.max_unauthenticated);
  spdlog::warn("the descriptor limit ({}) allows {} connections with a key and {} without, not {} and {}", fds,
               caps.max_connections, caps.max_unauthenticated, asked_keyed, asked_keyless);
}

Result<HttpServerOptions> HttpOptionsFor(const ServeConfig& config) {
  HttpServerOptions http;
  http.host = config.listen_host;
  http.port = config.listen_port;
  http.threads = static_cast<size_t>(config.threads);
  http.upload_threads = std::max<size_t>(2, http.threads / 4);
  http.max_body = static_cast<size_t>(config.max_body);
  http.idle_timeout_s = std::max<int64_t>(1, config.request_timeout_ms / 1000);
  http.caps.max_connections = config.max_connections;
  http.caps.max_unauthenticated = config.max_unauthenticated;
  http.caps.max_per_address = config.max_connections_per_address;
  http.caps.head_timeout_ms = config.head_timeout_ms;
  http.caps.unauthenticated_head_timeout_ms = config.unauthenticated_timeout_ms;
  http.caps.body_min_rate = config.body_min_rate;
  FitCapsToDescriptors(http.caps);
  if (!config.tls_cert.empty()) {
    SCIMESH_ASSIGN_OR_RETURN(http.tls_cert_pem, ReadPem(config.tls_cert, "certificate", "--tls-cert"));
    SCIMESH_ASSIGN_OR_RETURN(http.tls_key_pem, ReadPem(config.tls_key, "key", "--tls-key"));
  }
  return http;
}

// `bound`: where the server listens, HOST:PORT (the default public URL's).
Ledger::Options LedgerOptionsFor(const ServeConfig& config, const std::string& bound) {
  Ledger::Options options;
  options.lease_ttl_ms = config.lease_ttl_ms;
  options.heartbeat_ms = config.heartbeat_ms;
  options.grace_ms = config.grace_ms;
  options.retry = RetryPolicy{config.retry_base_ms, config.retry_cap_ms};
  const bool tls = !config.tls_cert.empty();
  options.public_url = config.public_url.empty() ? (tls ? "https://" : "http://") + bound : config.public_url;
  options.artifact_quota = ArtifactQuota{config.max_artifacts_per_lease, config.max_artifact_bytes_per_lease};
  options.artifact_grace_ms = config.artifact_grace_ms;
  return options;
}

ApiLimits ApiLimitsFor(const ServeConfig& config) {
  ApiLimits limits;
  limits.max_body = static_cast<size_t>(config.max_body);
  limits.max_artifact = config.max_artifact;
  limits.max_claim_hold_ms = config.request_timeout_ms * 4 / 5;
  return limits;
}

// Counts every answer, and logs one debug line per request: method, path (ids
// only), status and the peer, so an operator (or a test) can see which
// connection made which call. Never headers or bodies: they hold the key and
// the step's data.
void ObserveRequests(HttpServer& server, Metrics& metrics) {
  server.OnClaimWake([&metrics](double s) { metrics.claim_wake().Observe(s); });
  server.OnAnswered([&metrics](const HttpRequest& req, int status, const std::string& route) {
    metrics.Request(req.method, RouteTemplate(route), status);
    // The path is the client's (decoded %0a included): escaped, so it cannot forge log lines.
    spdlog::debug("request {} {} -> {} from {}:{}", log::EscapeForLog(req.method), log::EscapeForLog(req.path), status,
                  req.remote_addr, req.remote_port);
  });
}

// The listeners: the API (bound already) and, when asked, the metrics
// endpoint. On a failure, stops what it started.
Result<std::unique_ptr<MetricsEndpoint>> StartListeners(const ServeConfig& config, HttpServer& server,
                                                        Metrics& metrics) {
  SCIMESH_RETURN_IF_ERROR(server.Start());
  if (config.metrics_host.empty()) return std::unique_ptr<MetricsEndpoint>();
  auto endpoint = MetricsEndpoint::Start(config.metrics_host, config.metrics_port, config.db, metrics, server);
  if (!endpoint.ok()) {
    server.Stop();
    return endpoint.status().WithContext("--metrics-listen");
  }
  spdlog::info("metrics on {}:{}/metrics", config.metrics_host, (*endpoint)->port());
  return endpoint;
}

}  // namespace

int RunServe(const ServeConfig& config) {
  SetUpLogging(config.log_level);
  sigset_t stop_signals = BlockStopSignals();
  int lock_fd = -1;
  if (Status s = LockDatabase(config.db, &lock_fd); !s.ok()) return Fail(s);
  auto stores = OpenStores(config);
  if (!stores.ok()) return Fail(stores.status());
  auto http = HttpOptionsFor(config);
  if (!http.ok()) return Fail(http.status());

  HttpServer server(*http);
  // Bound before the Ledger opens: the default public URL names the port.
  if (Status s = server.Bind(); !s.ok()) return Fail(s);
  const int port = server.port();
  const bool v6 = config.listen_host.find(':') != std::string::npos;
  const std::string bound = (v6 ? "[" + config.listen_host + "]" : config.listen_host) + ":" + std::to_string(port);

  std::atomic<Sweeper*> sweeper_ptr{nullptr};
  Ledger::Signals sigs;
  sigs.work_available = [&server] { server.WorkAvailable(); };
  sigs.clock_due = [&sweeper_ptr](int64_t at) {
    if (Sweeper* s = sweeper_ptr.load()) s->DueAt(at);
  };
  Metrics metrics;
  Database::ObserveCommits([&metrics](double s) { metrics.commit().Observe(s); });
  auto ledger = Ledger::Open(config.db, LedgerOptionsFor(config, bound), sigs);
  if (!ledger.ok()) return Fail(ledger.status().WithContext("--db " + config.db));
  Sweeper sweeper(**ledger);
  sweeper_ptr = &sweeper;
  ArtifactCollector collector(**ledger, *stores->artifacts, std::chrono::milliseconds(config.artifact_grace_ms));
  auto tokens = LeaseTokens::Open(config.db + ".lease-secret");
  if (!tokens.ok()) return Fail(tokens.status().WithContext(config.db + ".lease-secret"));
  HttpApi api(**ledger, *stores->keys, *tokens, *stores->artifacts, *stores->audit, ApiLimitsFor(config));
  api.Install(server);
  ObserveRequests(server, metrics);
  sweeper.Start();
  collector.Start();
  auto metrics_endpoint = StartListeners(config, server, metrics);
  if (!metrics_endpoint.ok()) {
    sweeper.Stop();
    return Fail(metrics_endpoint.status());
  }
  // The port file says "ready": written once every listener is up.
  if (!config.port_file.empty()) {
    if (Status s = WriteFileAtomically(config.port_file, std::to_string(port) + "\n", 0644); !s.ok()) {
      spdlog::error("cannot write the port file: {}", s.ToString());
      if (*metrics_endpoint) (*metrics_endpoint)->Stop();
      server.Stop();
      sweeper.Stop();
      return 1;
    }
  }
  spdlog::info("listening on {}{} (lease ttl {} ms, heartbeat {} ms, grace {} ms, {} handler threads)", bound,
               config.tls_cert.empty() ? "" : " (https)", config.lease_ttl_ms, config.heartbeat_ms, config.grace_ms,
               config.threads);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  spdlog::info("received {}: stopping (held claims released, in-flight calls finish)", strsignal(sig));
  if (*metrics_endpoint) (*metrics_endpoint)->Stop();
  server.Stop();  // returns once in-flight requests are answered

  sweeper.Stop();
  sweeper_ptr = nullptr;
  ledger->reset();  // closes the database (checkpointing the WAL)
  if (!config.port_file.empty()) ::unlink(config.port_file.c_str());
  Database::ObserveCommits(nullptr);
  ::close(lock_fd);
  spdlog::info("stopped");
  return 0;
}

}  // namespace scimesh::coordinator
