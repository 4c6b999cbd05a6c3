// failure.json: written by the failing rank, parsed by the launcher.
#include "protocol/attempt/failure_file.h"

#include <limits>

#include "protocol/attempt/attempt_files.h"
#include "protocol/util/json_io.h"
#include "protocol/wire/fail_message.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

Result<FailureFile> ParseFields(const rapidjson::Value& doc) {
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  FailureFile f;
  SCIMESH_ASSIGN_OR_RETURN(std::string cls, o.String("class"));
  const auto parsed = ParseFailClass(cls);
  if (!parsed) return Status::InvalidField("class", "unknown failure class '" + TruncateUtf8(cls, 64) + "'");
  if (!StepMayReport(*parsed)) {
    return Status::InvalidField("class", "'" + cls +
                                             "' is not a class a step may report (retryable, timeout, "
                                             "invalid_output, input_checksum, fatal)");
  }
  f.failure_class = *parsed;
  SCIMESH_ASSIGN_OR_RETURN(f.message, o.String("message"));
  SCIMESH_ASSIGN_OR_RETURN(f.rank, o.IntIn("rank", 0, std::numeric_limits<int>::max()));
  SCIMESH_ASSIGN_OR_RETURN(f.host, o.StringIn("host", 1, kMaxHostBytes));
  return f;
}

}  // namespace

std::string SerializeFailureFile(const FailureFile& file) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "class", FailClassName(file.failure_class));
    WriteString(w, "message", SanitizeFailMessage(file.message));
    WriteInt(w, "rank", file.rank);
    WriteString(w, "host", TruncateUtf8(file.host, kMaxHostBytes));
  }) + "\n";
}

Result<FailureFile> ParseFailureFile(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, kFailureFileName));
  auto f = ParseFields(doc);
  if (!f.ok()) return f.status().WithContext(kFailureFileName);
  return f;
}

}  // namespace scimesh
