// Flags, environment and config file for `serve`, merged and checked.
#include "coordinator/serve_config.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>

#include "coordinator/cli.h"

namespace scimesh::coordinator {
namespace {

// The settings, by name (flag without dashes, config file key).
using Values = std::map<std::string, std::string>;

struct TextSetting {
  const char* name;
  std::string ServeConfig::*field;
};
constexpr TextSetting kTextSettings[] = {
    {"db", &ServeConfig::db},
    {"keys", &ServeConfig::keys},
    {"port-file", &ServeConfig::port_file},
    {"artifact-dir", &ServeConfig::artifact_dir},
    {"public-url", &ServeConfig::public_url},
    {"audit-log", &ServeConfig::audit_log},
    {"log-level", &ServeConfig::log_level},
    {"tls-cert", &ServeConfig::tls_cert},
    {"tls-key", &ServeConfig::tls_key},
};

// An integer setting and its range (checked in this order).
struct IntSetting {
  const char* name;
  int64_t min;
  int64_t max;
  int64_t ServeConfig::*field;
};
constexpr IntSetting kIntSettings[] = {
    {"lease-ttl-ms", 100, 86400000, &ServeConfig::lease_ttl_ms},
    {"heartbeat-ms", 10, 86400000, &ServeConfig::heartbeat_ms},
    {"grace-ms", 0, 86400000, &ServeConfig::grace_ms},
    {"retry-base-ms", 0, 86400000, &ServeConfig::retry_base_ms},
    {"retry-cap-ms", 0, 86400000, &ServeConfig::retry_cap_ms},
    {"request-timeout-ms", 1000, 3600000, &ServeConfig::request_timeout_ms},
    {"max-body", 1024, 1LL << 30, &ServeConfig::max_body},
    {"max-artifact", 1, 1LL << 40, &ServeConfig::max_artifact},
    {"max-artifacts-per-lease", 1, 1000000, &ServeConfig::max_artifacts_per_lease},
    {"max-artifact-bytes-per-lease", 1, 1LL << 50, &ServeConfig::max_artifact_bytes_per_lease},
    {"max-store-bytes", 0, 1LL << 60, &ServeConfig::max_store_bytes},
    {"artifact-grace-ms", 100, 31536000000LL, &ServeConfig::artifact_grace_ms},
    {"threads", 8, 4096, &ServeConfig::threads},
    {"max-connections", 16, 1000000, &ServeConfig::max_connections},
    {"max-connections-per-address", 1, 1000000, &ServeConfig::max_connections_per_address},
    {"max-unauthenticated", 16, 1000000, &ServeConfig::max_unauthenticated},
    {"head-timeout-ms", 100, 3600000, &ServeConfig::head_timeout_ms},
    {"unauthenticated-timeout-ms", 100, 3600000, &ServeConfig::unauthenticated_timeout_ms},
    {"body-min-rate", 0, 1LL << 30, &ServeConfig::body_min_rate},
};

// The settings read otherwise: two addresses and the config file itself.
constexpr const char* kOtherSettings[] = {"listen", "metrics-listen", "config"};

template <typename Table>
bool InTable(const Table& table, const std::string& name) {
  return std::any_of(std::begin(table), std::end(table), [&](const auto& s) { return name == s.name; });
}

bool Known(const std::string& name) {
  return InTable(kTextSettings, name) || InTable(kIntSettings, name) ||
         std::any_of(std::begin(kOtherSettings), std::end(kOtherSettings), [&](const char* n) { return name == n; });
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

Status ReadConfigFile(const std::string& path, Values& out) {
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

Status ToInt(const Values& v, const IntSetting& setting, ServeConfig& c) {
  auto it = v.find(setting.name);
  if (it == v.end()) return Status::Ok();
  const std::string& s = it->second;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < setting.min || n > setting.max) {
    return Status::InvalidArgument("--" + std::string(setting.name) + ": must be an integer from " +
                                   std::to_string(setting.min) + " to " + std::to_string(setting.max));
  }
  c.*setting.field = n;
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

// The flags of `args` by name; `help` when -h or --help came first.
Result<Values> ReadFlags(const std::vector<std::string>& args, bool& help) {
  Values flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      help = true;
      return flags;
    }
    if (a.rfind("--", 0) != 0) return Status::InvalidArgument("unexpected argument '" + a + "' (see --help)");
    auto [name, value] = TakeFlag(args, i);
    if (!value) return Status::InvalidArgument("--" + name + ": needs a value");
    if (!Known(name)) return Status::InvalidArgument("unknown flag --" + name + " (see --help)");
    flags[name] = *value;
  }
  return flags;
}

// Every setting given: the config file's, overridden by the environment's,
// overridden by the flags.
Result<Values> MergeSources(const Values& flags, const EnvLookup& getenv) {
  Values v;
  std::string config = flags.count("config") ? flags.at("config") : "";
  if (config.empty() && getenv(EnvName("config").c_str()) != nullptr) config = getenv(EnvName("config").c_str());
  if (!config.empty()) SCIMESH_RETURN_IF_ERROR(ReadConfigFile(config, v));
  auto from_env = [&](const char* name) {
    if (const char* e = getenv(EnvName(name).c_str()); e != nullptr && *e != '\0') v[name] = e;
  };
  for (const auto& s : kTextSettings) from_env(s.name);
  for (const auto& s : kIntSettings) from_env(s.name);
  for (const char* name : kOtherSettings) from_env(name);
  for (const auto& [k, val] : flags) v[k] = val;
  return v;
}

Status Apply(const Values& v, ServeConfig& c) {
  for (const auto& s : kTextSettings) {
    if (auto it = v.find(s.name); it != v.end()) c.*s.field = it->second;
  }
  if (auto it = v.find("listen"); it != v.end()) {
    SCIMESH_RETURN_IF_ERROR(ParseListen(it->second, c.listen_host, c.listen_port, "--listen"));
  }
  if (auto it = v.find("metrics-listen"); it != v.end() && !it->second.empty()) {
    SCIMESH_RETURN_IF_ERROR(ParseListen(it->second, c.metrics_host, c.metrics_port, "--metrics-listen"));
  }
  for (const auto& s : kIntSettings) SCIMESH_RETURN_IF_ERROR(ToInt(v, s, c));
  return Status::Ok();
}

// Refuses what cannot work together and fills in the defaults that follow
// from other settings.
Status CheckAndComplete(ServeConfig& c) {
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
  return Status::Ok();
}

}  // namespace

Result<ServeConfig> ParseServeConfig(const std::vector<std::string>& args, const EnvLookup& getenv) {
  ServeConfig c;
  SCIMESH_ASSIGN_OR_RETURN(Values flags, ReadFlags(args, c.help));
  if (c.help) return c;
  SCIMESH_ASSIGN_OR_RETURN(Values v, MergeSources(flags, getenv));
  SCIMESH_RETURN_IF_ERROR(Apply(v, c));
  SCIMESH_RETURN_IF_ERROR(CheckAndComplete(c));
  return c;
}

namespace {

// `serve --help`, a section each.
constexpr char kUsageIntro[] = R"usage(Usage: scimesh-coordinator serve --db PATH --keys PATH [options]

Runs the reference lease coordinator: the worker protocol and the run API of
docs/protocol.md over HTTP, with its state in one SQLite database.

)usage";
constexpr char kUsageRequired[] = R"usage(Required:
  --db PATH                 SQLite database (created if absent; WAL mode). Keep it
                            on a local disk: every answered call is on disk first.
  --keys PATH               keys file, one "NAME SCOPES SHA256" per line; create
                            keys with `scimesh-coordinator keys add`. Re-read when
                            it changes.

)usage";
constexpr char kUsageNetwork[] = R"usage(Network:
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

)usage";
constexpr char kUsageLeases[] = R"usage(Leases:
  --lease-ttl-ms N          lease lifetime after each heartbeat (default 30000)
  --heartbeat-ms N          heartbeat interval told to workers (default 10000;
                            must be below the TTL)
  --grace-ms N              how long an expired lease may still be revived by its
                            owner before its attempt is expired (default: the TTL)
  --retry-base-ms N         backoff base for retried failures (default 1000)
  --retry-cap-ms N          backoff cap (default 60000)

)usage";
constexpr char kUsageFiles[] = R"usage(Files:
  --artifact-dir DIR        content-addressed artifact store (default <db>.artifacts)
  --audit-log PATH          JSON-lines log of every read of a run
                            (default <db>.audit.log)
  --log-level LEVEL         debug, info (default), warn or error; logs go to stderr

)usage";
constexpr char kUsageConfiguration[] = R"usage(Configuration:
  --config FILE             name=value lines with the flag names above (no dashes
                            in front, # comments). Precedence: flags, then the
                            environment SCIMESH_COORDINATOR_<NAME> (e.g.
                            SCIMESH_COORDINATOR_LEASE_TTL_MS), then the file.

)usage";
constexpr char kUsageSignals[] = R"usage(SIGTERM or SIGINT: stops accepting, releases held claims, finishes in-flight
requests, closes the database, exits 0. See docs/coordinator.md.
)usage";

}  // namespace

std::string ServeUsage() {
  std::string usage;
  for (const char* section : {kUsageIntro, kUsageRequired, kUsageNetwork, kUsageLeases, kUsageFiles,
                              kUsageConfiguration, kUsageSignals}) {
    usage += section;
  }
  return usage;
}

}  // namespace scimesh::coordinator
