// Flags, environment and config file for `serve`, merged and checked.
#include "coordinator/serve_config.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>

namespace scimesh::coordinator {
namespace {

constexpr const char* kNames[] = {
    "db",         "listen",        "port-file",     "keys",           "artifact-dir",
    "public-url", "lease-ttl-ms",  "heartbeat-ms",  "grace-ms",       "retry-base-ms",
    "retry-cap-ms", "request-timeout-ms", "max-body", "max-artifact", "audit-log",
    "threads",    "config",        "log-level",
    "max-connections", "max-connections-per-address", "head-timeout-ms", "body-min-rate",
    "max-unauthenticated", "unauthenticated-timeout-ms",
    "max-artifacts-per-lease", "max-artifact-bytes-per-lease", "max-store-bytes", "artifact-grace-ms",
    "tls-cert",   "tls-key",       "metrics-listen",
};

bool Known(const std::string& name) {
  return std::find_if(std::begin(kNames), std::end(kNames), [&](const char* n) { return name == n; }) !=
         std::end(kNames);
}

std::string EnvName(const std::string& name) {
  std::string out = "SCIMESH_COORDINATOR_";
  for (char c : name) out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

Status ReadConfigFile(const std::string& path, std::map<std::string, std::string>& out) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("--config: cannot read the config file");
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t eq = t.find('=');
    const std::string where = "config file line " + std::to_string(lineno);
    if (eq == std::string::npos) return Status::InvalidArgument(where + ": expected name=value");
    std::string name = Trim(t.substr(0, eq));
    if (!Known(name) || name == "config") return Status::InvalidArgument(where + ": unknown setting '" + name + "'");
    out[name] = Trim(t.substr(eq + 1));
  }
  return Status::Ok();
}

Status ToInt(const std::map<std::string, std::string>& v, const char* name, int64_t min, int64_t max,
             int64_t* out) {
  auto it = v.find(name);
  if (it == v.end()) return Status::Ok();
  const std::string& s = it->second;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < min || n > max) {
    return Status::InvalidArgument("--" + std::string(name) + ": must be an integer from " + std::to_string(min) +
                                   " to " + std::to_string(max));
  }
  *out = n;
  return Status::Ok();
}

Status ParseListen(const std::string& s, std::string& out_host, int& out_port, const char* flag) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return Status::InvalidArgument(std::string(flag) + ": expected HOST:PORT");
  std::string host = s.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = 0;
  std::string p = s.substr(colon + 1);
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc() || end != p.data() + p.size() || port < 0 || port > 65535) {
    return Status::InvalidArgument(std::string(flag) + ": the port must be 0-65535");
  }
  out_host = host;
  out_port = port;
  return Status::Ok();
}

}  // namespace

Result<ServeConfig> ParseServeConfig(const std::vector<std::string>& args, const EnvLookup& getenv) {
  ServeConfig c;
  std::map<std::string, std::string> flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      c.help = true;
      return c;
    }
    if (a.rfind("--", 0) != 0) return Status::InvalidArgument("unexpected argument '" + a + "' (see --help)");
    std::string name = a.substr(2), value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else {
      if (i + 1 >= args.size()) return Status::InvalidArgument("--" + name + ": needs a value");
      value = args[++i];
    }
    if (!Known(name)) return Status::InvalidArgument("unknown flag --" + name + " (see --help)");
    flags[name] = value;
  }
  std::map<std::string, std::string> v;
  std::string config = flags.count("config") ? flags["config"] : "";
  if (config.empty() && getenv(EnvName("config").c_str()) != nullptr) config = getenv(EnvName("config").c_str());
  if (!config.empty()) SCIMESH_RETURN_IF_ERROR(ReadConfigFile(config, v));
  for (const char* name : kNames) {
    if (const char* e = getenv(EnvName(name).c_str()); e != nullptr && *e != '\0') v[name] = e;
  }
  for (auto& [k, val] : flags) v[k] = val;

  auto str = [&](const char* name, std::string* out) {
    if (auto it = v.find(name); it != v.end()) *out = it->second;
  };
  str("db", &c.db);
  str("keys", &c.keys);
  str("port-file", &c.port_file);
  str("artifact-dir", &c.artifact_dir);
  str("public-url", &c.public_url);
  str("audit-log", &c.audit_log);
  str("log-level", &c.log_level);
  str("tls-cert", &c.tls_cert);
  str("tls-key", &c.tls_key);
  if (auto it = v.find("listen"); it != v.end()) {
    SCIMESH_RETURN_IF_ERROR(ParseListen(it->second, c.listen_host, c.listen_port, "--listen"));
  }
  if (auto it = v.find("metrics-listen"); it != v.end() && !it->second.empty()) {
    SCIMESH_RETURN_IF_ERROR(ParseListen(it->second, c.metrics_host, c.metrics_port, "--metrics-listen"));
  }
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "lease-ttl-ms", 100, 86400000, &c.lease_ttl_ms));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "heartbeat-ms", 10, 86400000, &c.heartbeat_ms));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "grace-ms", 0, 86400000, &c.grace_ms));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "retry-base-ms", 0, 86400000, &c.retry_base_ms));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "retry-cap-ms", 0, 86400000, &c.retry_cap_ms));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "request-timeout-ms", 1000, 3600000, &c.request_timeout_ms));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "max-body", 1024, 1LL << 30, &c.max_body));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "max-artifact", 1, 1LL << 40, &c.max_artifact));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "max-artifacts-per-lease", 1, 1000000, &c.max_artifacts_per_lease));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "max-artifact-bytes-per-lease", 1, 1LL << 50, &c.max_artifact_bytes_per_lease));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "max-store-bytes", 0, 1LL << 60, &c.max_store_bytes));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "artifact-grace-ms", 100, 31536000000LL, &c.artifact_grace_ms));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "threads", 8, 4096, &c.threads));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "max-connections", 16, 1000000, &c.max_connections));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "max-connections-per-address", 1, 1000000, &c.max_connections_per_address));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "max-unauthenticated", 16, 1000000, &c.max_unauthenticated));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "head-timeout-ms", 100, 3600000, &c.head_timeout_ms));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "unauthenticated-timeout-ms", 100, 3600000, &c.unauthenticated_timeout_ms));
  SCIMESH_RETURN_IF_ERROR(ToInt(v, "body-min-rate", 0, 1LL << 30, &c.body_min_rate));

  if (c.db.empty()) return Status::InvalidArgument("--db is required (the SQLite database file)");
  if (c.keys.empty()) return Status::InvalidArgument("--keys is required (see `scimesh-coordinator keys add`)");
  if (c.grace_ms < 0) c.grace_ms = c.lease_ttl_ms;
  if (c.heartbeat_ms >= c.lease_ttl_ms) {
    return Status::InvalidArgument("--heartbeat-ms must be shorter than --lease-ttl-ms");
  }
  if (c.retry_base_ms > c.retry_cap_ms) {
    return Status::InvalidArgument("--retry-base-ms must not exceed --retry-cap-ms");
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  if (c.artifact_dir.empty()) c.artifact_dir = c.db + ".artifacts";
  if (c.audit_log.empty()) c.audit_log = c.db + ".audit.log";
  if (c.log_level != "debug" && c.log_level != "info" && c.log_level != "warn" && c.log_level != "error") {
    return Status::InvalidArgument("--log-level: must be debug, info, warn or error");
  }
  while (!c.public_url.empty() && c.public_url.back() == '/') c.public_url.pop_back();
  return c;
}

std::string ServeUsage() {
  return R"usage(Usage: scimesh-coordinator serve --db PATH --keys PATH [options]

Runs the reference lease coordinator: the worker protocol and the run API of
docs/protocol.md over HTTP, with its state in one SQLite database.

Required:
  --db PATH                 SQLite database (created if absent; WAL mode). Keep it
                            on a local disk: every answered call is on disk first.
  --keys PATH               keys file, one "NAME SCOPES SHA256" per line; create
                            keys with `scimesh-coordinator keys add`. Re-read when
                            it changes.

Network:
  --listen HOST:PORT        address to listen on (default 127.0.0.1:8470, loopback
                            only); port 0 picks a free port
  --port-file PATH          write the bound port here (atomically) once listening
  --public-url URL          base of the artifact URIs handed to workers
                            (default http://HOST:BOUND-PORT)
  --threads N               handler threads (default 32, at least 8). Requests run on
                            them once fully received; a held claim, an idle or slow
                            connection uses none.
  --request-timeout-ms N    a connection with no traffic at all for this long is
                            closed (default 30000); a claim is held at most 4/5 of
                            it (24 s by default)
  --head-timeout-ms N       the request line and headers must arrive within this
                            (default 10000), else the connection is closed; also
                            how long an idle keep-alive connection stays open
  --body-min-rate BYTES     a request body must arrive at this many bytes/s on
                            average after the head timeout's allowance (default
                            4096), else the connection is closed
  --max-connections N       open connections that presented a known key (default
                            8192); past it requests are answered 503 with
                            Retry-After
  --max-unauthenticated N   open connections that have not presented a known key
                            yet (default 1024); past it the one open longest is
                            closed. A flood of them never reaches the connections
                            of workers holding a key.
  --max-connections-per-address N
                            of those without a known key, how many one client
                            address may hold (default 256); past it that
                            address's oldest is closed
  --unauthenticated-timeout-ms N
                            a connection without a known key must send its
                            request line and headers within this (default 3000;
                            at most --head-timeout-ms)
  --metrics-listen HOST:PORT
                            serve GET /metrics (Prometheus text format, no key)
                            on this separate address (default: none)
  --tls-cert PATH           serve HTTPS with this PEM certificate (chain) ...
  --tls-key PATH            ... and this PEM private key (both or neither)
  --max-body BYTES          largest JSON request body (default 1048576)
  --max-artifact BYTES      largest artifact upload (default 268435456)
  --max-artifacts-per-lease N
                            artifacts one lease may upload (default 1024); told
                            to workers in the lease, past it 413
  --max-artifact-bytes-per-lease BYTES
                            bytes one lease may upload in all (default
                            17179869184, 16 GiB); past it 413
  --max-store-bytes BYTES   cap on the artifact store, 0 for only the disk's
                            free space (default 0); a full store answers uploads
                            507 with Retry-After, and the step is requeued
                            without spending an attempt
  --artifact-grace-ms N     uploads of an attempt that did not complete are
                            deleted this long after it ended (default 3600000),
                            and stored files nothing refers to once this old

Leases:
  --lease-ttl-ms N          lease lifetime after each heartbeat (default 30000)
  --heartbeat-ms N          heartbeat interval told to workers (default 10000;
                            must be below the TTL)
  --grace-ms N              how long an expired lease may still be revived by its
                            owner before its attempt is expired (default: the TTL)
  --retry-base-ms N         backoff base for retried failures (default 1000)
  --retry-cap-ms N          backoff cap (default 60000)

Files:
  --artifact-dir DIR        content-addressed artifact store (default <db>.artifacts)
  --audit-log PATH          JSON-lines log of every read of a run
                            (default <db>.audit.log)
  --log-level LEVEL         debug, info (default), warn or error; logs go to stderr

Configuration:
  --config FILE             name=value lines with the flag names above (no dashes
                            in front, # comments). Precedence: flags, then the
                            environment SCIMESH_COORDINATOR_<NAME> (e.g.
                            SCIMESH_COORDINATOR_LEASE_TTL_MS), then the file.

SIGTERM or SIGINT: stops accepting, releases held claims, finishes in-flight
requests, closes the database, exits 0. See docs/coordinator.md.
)usage";
}

}  // namespace scimesh::coordinator
