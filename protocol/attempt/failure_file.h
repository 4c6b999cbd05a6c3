// failure.json: a step's own failure, with the class it chose
// (scimesh_step_fail). Written once by the rank that failed first, read by the
// launcher after the step's processes ended (docs/protocol.md "Local files").
//
// {"class": "fatal", "message": "bad mesh: 0 cells", "rank": 3, "host": "n2"}
//
// Plain values and free functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh {

struct FailureFile {
  FailClass failure_class = FailClass::kFatal;  // one StepMayReport() accepts
  std::string message;                          // one line, at most kMaxFailMessageBytes
  int64_t rank = 0;                             // in the step's communicator
  std::string host;                             // that rank's HostName()
};

// The file's JSON; `message` sanitised as a fail message
// (protocol/wire/fail_message.h), so the text is valid UTF-8, one line, 4 KiB.
std::string SerializeFailureFile(const FailureFile& file);

// failure.json's text, depth-limited. kInvalidArgument naming failure.json
// and why: malformed JSON, a missing or mistyped field, an unknown class, or
// a class a step may not report (StepMayReport).
Result<FailureFile> ParseFailureFile(std::string_view json);

}  // namespace scimesh
