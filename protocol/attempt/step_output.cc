// Deciding whether a body produced a result.
#include "protocol/attempt/step_output.h"

#include <unistd.h>

#include "protocol/attempt/attempt_dir.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/util/json_io.h"

namespace scimesh {

Result<std::string> CheckStepOutput(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("the step produced no output (empty result)");
  }
  if (text.size() > kMaxOutputBytes) {
    return Status::InvalidArgument("the step's output is larger than " + std::to_string(kMaxOutputBytes) +
                                   " bytes");
  }
  auto doc = ParseJson(text, "output");
  if (!doc.ok()) return Status::InvalidArgument("the step's output is not valid JSON");
  if (!doc->IsObject()) return Status::InvalidArgument("the step's output is not a JSON object");
  return ToJsonText(*doc);
}

Result<std::string> ReadOutputFile(const AttemptDir& dir) {
  auto text = ReadAttemptFile(dir.fd(), kOutputFileName, ::geteuid(), kMaxOutputBytes);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) {
      return Status::InvalidArgument("the step wrote no output.json (empty result)");
    }
    return Status::InvalidArgument(text.status().message());
  }
  return CheckStepOutput(*text);
}

}  // namespace scimesh
