// Plugstack arguments: key=value pairs, each key at most once, unknown keys refused.
#include "plugin/plugin_config.h"

#include <charconv>
#include <set>

#include "protocol/util/url.h"

namespace scimesh::spank {
namespace {

Result<int64_t> ParseBounded(std::string_view key, std::string_view value, int64_t lo, int64_t hi) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < lo || n > hi) {
    return Status::InvalidArgument(std::string(key) + "=" + std::string(value) + ": must be an integer from " +
                                   std::to_string(lo) + " to " + std::to_string(hi));
  }
  return n;
}

Result<bool> ParseFlag(std::string_view key, std::string_view value) {
  if (value == "0") return false;
  if (value == "1") return true;
  return Status::InvalidArgument(std::string(key) + "=" + std::string(value) + ": must be 0 or 1");
}

}  // namespace

Result<std::chrono::milliseconds> ParseKillGraceMs(std::string_view value) {
  SCIMESH_ASSIGN_OR_RETURN(int64_t n, ParseBounded(kKillGraceEnv, value, 0, 600000));
  return std::chrono::milliseconds(n);
}

Result<PluginConfig> ParsePluginArgs(const std::vector<std::string_view>& args) {
  PluginConfig c;
  std::set<std::string, std::less<>> seen;
  for (std::string_view arg : args) {
    auto eq = arg.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Status::InvalidArgument("argument '" + std::string(arg) + "': expected key=value");
    }
    std::string_view key = arg.substr(0, eq);
    std::string_view value = arg.substr(eq + 1);
    if (!seen.insert(std::string(key)).second) {
      return Status::InvalidArgument("argument '" + std::string(key) + "' given twice");
    }
    if (value.empty()) return Status::InvalidArgument("argument '" + std::string(key) + "' has an empty value");
    if (key == "url") {
      auto url = ParseUrl(value);
      if (!url.ok()) return Status::InvalidArgument("url=: " + url.status().message());
      c.url = std::string(value);
    } else if (key == "credentials") {
      if (value == "job_env") c.credentials = Credentials::kJobEnvironment;
      else if (value == "none") c.credentials = Credentials::kNone;
      else return Status::InvalidArgument("credentials=" + std::string(value) + ": must be job_env or none");
    } else if (key == "grace_s") {
      SCIMESH_ASSIGN_OR_RETURN(int64_t n, ParseBounded(key, value, 0, 600));
      c.grace = std::chrono::seconds(n);
    } else if (key == "poll_ms") {
      SCIMESH_ASSIGN_OR_RETURN(int64_t n, ParseBounded(key, value, 10, 10000));
      c.poll = std::chrono::milliseconds(n);
    } else if (key == "timeout_ms") {
      SCIMESH_ASSIGN_OR_RETURN(int64_t n, ParseBounded(key, value, 100, 30000));
      c.call_timeout = std::chrono::milliseconds(n);
    } else if (key == "exit_timeout_ms") {
      SCIMESH_ASSIGN_OR_RETURN(int64_t n, ParseBounded(key, value, 500, 60000));
      c.exit_timeout = std::chrono::milliseconds(n);
    } else if (key == "require") {
      SCIMESH_ASSIGN_OR_RETURN(c.require, ParseFlag(key, value));
    } else if (key == "allow_insecure_http") {
      SCIMESH_ASSIGN_OR_RETURN(c.allow_insecure_http, ParseFlag(key, value));
    } else {
      return Status::InvalidArgument("unknown argument '" + std::string(key) +
                                     "' (known: url, credentials, grace_s, poll_ms, timeout_ms, exit_timeout_ms, "
                                     "require, allow_insecure_http)");
    }
  }
  return c;
}

std::string DescribeConfig(const PluginConfig& c) {
  std::string s = "url=" + (c.url ? *c.url : std::string("<none: never reports>"));
  s += c.credentials == Credentials::kNone ? " credentials=none" : " credentials=job_env";
  s += " grace_s=" + std::to_string(c.grace.count());
  s += " poll_ms=" + std::to_string(c.poll.count());
  s += " timeout_ms=" + std::to_string(c.call_timeout.count());
  s += " exit_timeout_ms=" + std::to_string(c.exit_timeout.count());
  s += std::string(" require=") + (c.require ? "1" : "0");
  s += std::string(" allow_insecure_http=") + (c.allow_insecure_http ? "1" : "0");
  return s;
}

}  // namespace scimesh::spank
