// The environment every process of a step gets -- its ranks now, and any
// command run for the step (setup, finish) later: built here and only here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "launcher/definitions/step_commands.h"
#include "protocol/wire/wire.h"

namespace scimesh::launcher {

// The W3C Trace Context `traceparent` of a step, version 00, sampled:
// "00-<trace_id>-<span_id>-01". nullopt unless trace_id is 32 and span_id 16
// lowercase hex digits, neither all zeros (what the specification requires):
// a step gets no TRACEPARENT rather than one a tracer would reject. Pure.
std::optional<std::string> TraceParent(std::string_view trace_id, std::string_view span_id);

// The variables added to a step's environment (on top of the launcher's own):
// `base` (the launcher's SCIMESH_* settings, no secrets), then the step's
// `run.env`, then SCIMESH_ATTEMPT_DIR and (when the lease's ids are valid)
// TRACEPARENT, which the step's own settings cannot replace. Pure.
std::map<std::string, std::string> StepEnvironment(const std::map<std::string, std::string>& base,
                                                   const StepCommand& cmd, const Lease& lease,
                                                   const std::string& attempt_dir);

}  // namespace scimesh::launcher
