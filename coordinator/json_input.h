// Strict JSON input: parses a request body within limits (depth, string
// length, valid UTF-8) and reads typed fields naming each by its path, so
// every 400 says which field and why (docs/protocol.md "Errors", "Limits").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "coordinator/api_error.h"
#include "protocol/wire_limits.h"

namespace scimesh::coordinator {

struct JsonLimits {
  size_t max_depth = 64;                // nesting of arrays and objects
  size_t max_string_bytes = 64 * 1024;  // one string or key
};

// Parses `text` as one JSON value. Iterative (no recursion), so a hostile
// body cannot overflow the stack; past a limit or malformed -> 400 with the
// offset. The document is owned by the caller.
ApiResult<std::unique_ptr<rapidjson::Document>> ParseJson(std::string_view text,
                                                          const JsonLimits& limits = {});

// Collects the first problem found while reading a request; later ones are
// ignored (a 400 names one field).
class InputProblems {
 public:
  void Add(std::string field, std::string why);
  bool any() const { return first_.has_value(); }
  // Precondition: any().
  ApiError error() const { return ApiError::BadRequest(first_->first, first_->second); }

 private:
  std::optional<std::pair<std::string, std::string>> first_;
};

enum class Need { kRequired, kOptional };

// Reads fields of one JSON object. A field that is absent or null is
// "absent": required -> problem, optional -> the default. A present field of
// the wrong type or out of range is always a problem. Not thread-safe; the
// object and the problem sink must outlive the reader.
class FieldReader {
 public:
  // `path` is the object's own path: "" at the top, "free", "definitions[0]".
  FieldReader(const rapidjson::Value& object, std::string path, InputProblems& problems);

  bool Has(const char* name) const;
  std::string PathOf(std::string_view name) const;
  void Fail(std::string_view name, std::string why);

  std::optional<std::string> String(const char* name, Need need, size_t min_len, size_t max_len);
  std::optional<int64_t> Int(const char* name, Need need, int64_t min, int64_t max);
  // The member if it is an object / array (within the size bounds) / any JSON.
  const rapidjson::Value* Object(const char* name, Need need);
  const rapidjson::Value* Array(const char* name, Need need, size_t min_size, size_t max_size);
  const rapidjson::Value* Any(const char* name, Need need);

  InputProblems& problems() { return problems_; }

 private:
  const rapidjson::Value* Find(const char* name, Need need);

  const rapidjson::Value* object_;
  std::string path_;
  InputProblems& problems_;
};

// kMaxWireInt (the largest integer where docs/protocol.md names no bound) is
// protocol/wire_limits.h's.

}  // namespace scimesh::coordinator
