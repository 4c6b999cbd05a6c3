// ServeConfig: the settings of `scimesh-coordinator serve`, from flags, the
// environment (SCIMESH_COORDINATOR_<NAME>) and a config file (name=value
// lines), in that order of precedence, checked before anything starts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::coordinator {

struct ServeConfig {
  std::string db;
  std::string listen_host = "127.0.0.1";
  int listen_port = 8470;
  std::string port_file;  // empty: none
  std::string keys;
  std::string artifact_dir;  // default: <db>.artifacts
  std::string public_url;    // default: http://<listen host>:<bound port>
  int64_t lease_ttl_ms = 30000;
  int64_t heartbeat_ms = 10000;
  int64_t grace_ms = -1;  // default: lease_ttl_ms
  int64_t retry_base_ms = 1000;
  int64_t retry_cap_ms = 60000;
  int64_t request_timeout_ms = 30000;
  int64_t max_body = 1 << 20;
  int64_t max_artifact = 256LL << 20;
  int64_t max_artifacts_per_lease = 1024;
  int64_t max_artifact_bytes_per_lease = 16LL << 30;
  int64_t max_store_bytes = 0;  // 0: only the disk bounds the store
  int64_t artifact_grace_ms = 3600000;
  std::string audit_log;  // default: <db>.audit.log
  int64_t threads = 32;
  int64_t max_connections = 8192;
  int64_t max_unauthenticated = 1024;
  int64_t max_connections_per_address = 256;
  int64_t head_timeout_ms = 10000;
  int64_t unauthenticated_timeout_ms = 3000;
  int64_t body_min_rate = 4096;
  std::string metrics_host;  // empty: no /metrics listener
  int metrics_port = 0;
  std::string tls_cert;  // empty: plain HTTP
  std::string tls_key;
  std::string log_level = "info";
  bool help = false;  // --help was given: print ServeUsage() and exit 0
};

// Reads `args` (after "serve"). `getenv` is injectable for tests. Failure:
// InvalidArgument naming the setting and why.
using EnvLookup = std::function<const char*(const char*)>;
Result<ServeConfig> ParseServeConfig(const std::vector<std::string>& args, const EnvLookup& getenv);

std::string ServeUsage();

}  // namespace scimesh::coordinator
