// Building a step's environment: settings, the step's own, attempt dir, trace context.
#include "launcher/step/step_environment.h"

#include <algorithm>

namespace scimesh::launcher {
namespace {

bool IsTraceContextId(std::string_view id, size_t length) {
  const bool hex = std::all_of(id.begin(), id.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  const bool all_zeros = std::all_of(id.begin(), id.end(), [](char c) { return c == '0'; });
  return id.size() == length && hex && !all_zeros;
}

}  // namespace

std::optional<std::string> TraceParent(std::string_view trace_id, std::string_view span_id) {
  if (!IsTraceContextId(trace_id, 32) || !IsTraceContextId(span_id, 16)) return std::nullopt;
  return "00-" + std::string(trace_id) + "-" + std::string(span_id) + "-01";
}

std::map<std::string, std::string> StepEnvironment(const std::map<std::string, std::string>& base,
                                                   const StepCommand& cmd, const Lease& lease,
                                                   const std::string& attempt_dir) {
  std::map<std::string, std::string> env = base;
  for (const auto& [k, v] : cmd.env) env[k] = v;
  env["SCIMESH_ATTEMPT_DIR"] = attempt_dir;
  if (auto traceparent = TraceParent(lease.trace_id, lease.span_id)) env["TRACEPARENT"] = *traceparent;
  return env;
}

}  // namespace scimesh::launcher
