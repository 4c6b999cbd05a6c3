// The serve command: startup checks, the server, signals and graceful shutdown.
#include "coordinator/serve.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <httplib.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "coordinator/artifact_store.h"
#include "coordinator/audit_log.h"
#include "coordinator/claim_waker.h"
#include "coordinator/http_api.h"
#include "coordinator/keys.h"
#include "coordinator/ledger.h"
#include "coordinator/sweeper.h"
#include "protocol/log.h"

namespace scimesh::coordinator {
namespace {

void SetUpLogging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("coordinator");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// Holds an exclusive lock on <db>.lock for the life of the process, so two
// coordinators never share one database. The kernel drops it on any exit.
Status LockDatabase(const std::string& db, int* fd_out) {
  int fd = ::open((db + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Io(std::string("cannot create the database lock file: ") + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return Status::Unavailable("another coordinator is using this database");
  }
  *fd_out = fd;
  return Status::Ok();
}

Status WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Io(std::string("cannot write the port file: ") + std::strerror(errno));
  const std::string text = std::to_string(port) + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Status::Io("cannot write the port file");
  }
  return Status::Ok();
}

int Fail(const Status& s) {
  spdlog::error("cannot start: {}", s.ToString());
  return 1;
}

}  // namespace

int RunServe(const ServeConfig& config) {
  SetUpLogging(config.log_level);
  // Every thread started from here on inherits the mask; one thread takes
  // the signals with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);  // internal: "the server is done, stop waiting"
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  int lock_fd = -1;
  if (Status s = LockDatabase(config.db, &lock_fd); !s.ok()) return Fail(s);
  auto keys = KeyRing::Load(config.keys);
  if (!keys.ok()) return Fail(keys.status().WithContext("keys file"));
  if ((*keys)->size() == 0) spdlog::warn("the keys file holds no keys: every call but health will get 401");
  auto artifacts = ArtifactStore::Open(config.artifact_dir);
  if (!artifacts.ok()) return Fail(artifacts.status());
  auto audit = AuditLog::Open(config.audit_log);
  if (!audit.ok()) return Fail(audit.status());

  httplib::Server server;
  const size_t threads = static_cast<size_t>(config.threads);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  const auto timeout = std::chrono::milliseconds(config.request_timeout_ms);
  server.set_read_timeout(timeout);
  server.set_write_timeout(timeout);
  server.set_tcp_nodelay(true);  // replies are small: never wait for Nagle + delayed ACK
  server.set_keep_alive_max_count(10000);
  // An idle keep-alive connection holds a pool thread (and delays shutdown)
  // for this long; clients reconnect transparently.
  server.set_keep_alive_timeout(2);
  server.set_payload_max_length(static_cast<size_t>(std::max(config.max_body, config.max_artifact)));

  int port = config.listen_port;
  if (port == 0) {
    port = server.bind_to_any_port(config.listen_host);
    if (port < 0) return Fail(Status::Unavailable("cannot listen on " + config.listen_host + ":0"));
  } else if (!server.bind_to_port(config.listen_host, port)) {
    return Fail(Status::Unavailable("cannot listen on " + config.listen_host + ":" + std::to_string(port)));
  }
  const bool v6 = config.listen_host.find(':') != std::string::npos;
  const std::string bound = (v6 ? "[" + config.listen_host + "]" : config.listen_host) + ":" + std::to_string(port);

  Ledger::Options options;
  options.lease_ttl_ms = config.lease_ttl_ms;
  options.heartbeat_ms = config.heartbeat_ms;
  options.grace_ms = config.grace_ms;
  options.retry = RetryPolicy{config.retry_base_ms, config.retry_cap_ms};
  options.public_url = config.public_url.empty() ? "http://" + bound : config.public_url;

  ClaimWaker waker;
  std::atomic<Sweeper*> sweeper_ptr{nullptr};
  Ledger::Signals sigs;
  sigs.work_available = [&waker] { waker.Notify(); };
  sigs.clock_due = [&sweeper_ptr](int64_t at) {
    if (Sweeper* s = sweeper_ptr.load()) s->DueAt(at);
  };
  auto ledger = Ledger::Open(config.db, options, sigs);
  if (!ledger.ok()) return Fail(ledger.status());
  Sweeper sweeper(**ledger);
  sweeper_ptr = &sweeper;

  ApiLimits limits;
  limits.max_body = static_cast<size_t>(config.max_body);
  limits.max_artifact = config.max_artifact;
  limits.max_claim_hold_ms = config.request_timeout_ms * 4 / 5;
  HttpApi api(**ledger, **keys, **artifacts, **audit, waker, limits);
  api.Install(server);
  // One debug line per request: method, path (ids only), status and the peer,
  // so an operator (or a test) can see which connection made which call.
  // Never headers or bodies: they hold the key and the step's data.
  server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    // The path is the client's (decoded %0a included): escaped, so it cannot forge log lines.
    spdlog::debug("request {} {} -> {} from {}:{}", log::EscapeForLog(req.method), log::EscapeForLog(req.path),
                  res.status, req.remote_addr, req.remote_port);
  });
  sweeper.Start();

  std::atomic<bool> listen_done{false};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig != SIGUSR1) spdlog::info("received {}: stopping (held claims released, in-flight calls finish)", strsignal(sig));
    waker.Shutdown();
    // stop() only acts on a running server: wait for the accept loop if the
    // signal came before it started.
    while (!listen_done.load()) {
      if (server.is_running()) {
        server.stop();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });

  if (!config.port_file.empty()) {
    if (Status s = WritePortFile(config.port_file, port); !s.ok()) {
      spdlog::error("cannot write the port file: {}", s.ToString());
      listen_done = true;
      pthread_kill(signal_thread.native_handle(), SIGUSR1);
      signal_thread.join();
      return 1;
    }
  }
  spdlog::info("listening on {} (lease ttl {} ms, heartbeat {} ms, grace {} ms, {} threads)", bound,
               config.lease_ttl_ms, config.heartbeat_ms, config.grace_ms, config.threads);
  server.listen_after_bind();  // returns after stop(), once in-flight requests are done
  listen_done = true;
  pthread_kill(signal_thread.native_handle(), SIGUSR1);
  signal_thread.join();

  sweeper.Stop();
  sweeper_ptr = nullptr;
  ledger->reset();  // closes the database (checkpointing the WAL)
  if (!config.port_file.empty()) ::unlink(config.port_file.c_str());
  ::close(lock_fd);
  spdlog::info("stopped");
  return 0;
}

}  // namespace scimesh::coordinator
