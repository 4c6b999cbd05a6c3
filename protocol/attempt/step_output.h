// A step's output: what counts as a result, and what is "empty"
// (docs/protocol.md "Empty result").
//
// Pure functions and one file read; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "protocol/util/status.h"

namespace scimesh {

class AttemptDir;

// The most output a complete request can carry (the coordinator's JSON body
// limit is 1 MiB; leave room for the rest of the request).
inline constexpr size_t kMaxOutputBytes = size_t{1000} * 1000;

// `text` as compact JSON if it is a JSON object; kInvalidArgument ("empty
// output", "output is not a JSON object", ...) otherwise. Such a step is
// reported with `fail` class invalid_output, never with `complete`.
Result<std::string> CheckStepOutput(std::string_view text);

// output.json of the attempt directory, with the same rules; a missing file
// is an empty result too. Never follows a symlink.
Result<std::string> ReadOutputFile(const AttemptDir& dir);

}  // namespace scimesh
