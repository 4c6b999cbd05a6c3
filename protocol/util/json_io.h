// JSON reading and writing helpers shared by the wire parsers: depth-limited
// parsing, typed field access with field paths in errors, compact JSON text.
//
// Stateless functions and a non-owning view; thread-safe as long as the
// underlying rapidjson values are not mutated concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "protocol/util/status.h"

namespace scimesh {

// How far JSON text from a peer or a file may go (ParseJson). The client
// reads with the defaults; the coordinator refuses requests deeper than 64
// (kServerJsonLimits, protocol/wire_limits.h), and a lease wraps such values
// in a few more levels.
struct JsonLimits {
  int max_depth = 128;                 // nesting of arrays and objects
  size_t max_string_bytes = SIZE_MAX;  // one string or key
};
inline constexpr int kMaxJsonDepth = JsonLimits{}.max_depth;

// Writer used for everything scimesh sends. Strings must be valid UTF-8:
// free-form text (fail messages) is sanitised before it gets here.
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// The text a writer produced.
inline std::string JsonText(const rapidjson::StringBuffer& buf) {
  return std::string(buf.GetString(), buf.GetSize());
}

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing past
// U+10FFFF. RapidJSON 1.1.0 turns a lone "\udc00" escape into the bytes of a
// surrogate, which its own reader then refuses: strings from a peer are
// checked with this so that what was read can always be written and read
// again (found by fuzz/client_responses_fuzzer).
bool IsWellFormedUtf8(std::string_view s);

// `text` cut to at most `max_bytes` at a UTF-8 sequence boundary.
std::string TruncateUtf8(std::string_view text, size_t max_bytes);

// Parses `text` (what: "claim response", used in errors). Fails with
// InvalidField("", why) in context `what` on malformed JSON, a NUL byte, a
// string that is not UTF-8, a key repeated in an object, or past `limits`
// (depth checked before parsing, so hostile input cannot exhaust the stack).
Result<rapidjson::Document> ParseJson(std::string_view text, std::string_view what,
                                      const JsonLimits& limits = {});

// Where malformed text went wrong: rapidjson's reason and its byte offset.
struct JsonSyntaxError {
  size_t offset = 0;
  std::string reason;
};

// ParseJson that also fills `*syntax` when the text is malformed JSON (not
// for the other refusals), for messages about files people edit.
Result<rapidjson::Document> ParseJson(std::string_view text, std::string_view what, const JsonLimits& limits,
                                      std::optional<JsonSyntaxError>* syntax);

// Compact JSON text of a value.
std::string ToJsonText(const rapidjson::Value& value);

// Re-serialises JSON text compactly; fails if it is not valid JSON.
Result<std::string> CanonicalJson(std::string_view text, std::string_view what);

// Writes already-validated JSON text as a value (from ToJsonText/CanonicalJson).
void WriteRawJson(JsonWriter& w, std::string_view json_text);

// Writes a string member; std::string_view keys and values.
void WriteString(JsonWriter& w, std::string_view key, std::string_view value);
void WriteInt(JsonWriter& w, std::string_view key, int64_t value);
// A member whose value is already-validated JSON text (WriteRawJson).
void WriteRaw(JsonWriter& w, std::string_view key, std::string_view json_text);
// A string member, or null when `value` is empty.
void WriteOptString(JsonWriter& w, std::string_view key, const std::optional<std::string>& value);
void WriteBool(JsonWriter& w, std::string_view key, bool value);
void WriteDouble(JsonWriter& w, std::string_view key, double value);
// A number member, or null when `value` is empty.
void WriteOptDouble(JsonWriter& w, std::string_view key, std::optional<double> value);
// An integer member, or null when `value` is empty.
void WriteOptInt(JsonWriter& w, std::string_view key, std::optional<int64_t> value);

// The compact text of one JSON object whose members `members(w)` writes.
template <typename Members>
std::string ObjectText(Members&& members) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  members(w);
  w.EndObject();
  return JsonText(buf);
}

// A member `key` whose value is an object with the members `members(w)` writes.
template <typename Members>
void WriteObject(JsonWriter& w, std::string_view key, Members&& members) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.StartObject();
  members(w);
  w.EndObject();
}

// A member `key` holding an array of `items`, each written by `item(w, x)`.
template <typename Items, typename Item>
void WriteArray(JsonWriter& w, std::string_view key, const Items& items, Item&& item) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.StartArray();
  for (const auto& x : items) item(w, x);
  w.EndArray();
}

// Element path: "leases" + 2 → "leases[2]".
std::string ElementPath(std::string_view array_path, size_t index);

// A read-only view of a JSON object with the path used in error messages
// ("leases[0].input_artifacts[1]"). Does not own the value. Every failure is
// a Status::InvalidField naming the field's path; a field that is null counts
// as absent ("is required" when it must be there).
class JsonObject {
 public:
  // Fails unless `value` is an object.
  static Result<JsonObject> Of(const rapidjson::Value& value, std::string path);

  const std::string& path() const { return path_; }
  std::string FieldPath(std::string_view name) const;
  bool Has(const char* name) const;  // present and not null

  Result<std::string> String(const char* name) const;
  Result<std::optional<std::string>> OptString(const char* name) const;  // absent/null → nullopt
  // A string of `min` to `max` bytes.
  Result<std::string> StringIn(const char* name, size_t min, size_t max) const;
  Result<std::optional<std::string>> OptStringIn(const char* name, size_t min, size_t max) const;
  Result<int64_t> Int(const char* name) const;
  Result<std::optional<int64_t>> OptInt(const char* name) const;
  // An integer from `min` to `max` (the coordinator's words when it is not).
  Result<int64_t> IntIn(const char* name, int64_t min, int64_t max) const;
  Result<std::optional<int64_t>> OptIntIn(const char* name, int64_t min, int64_t max) const;
  Result<bool> Bool(const char* name) const;
  Result<JsonObject> Object(const char* name) const;
  Result<const rapidjson::Value*> Array(const char* name) const;
  // An array of `min` to `max` elements.
  Result<const rapidjson::Value*> ArrayIn(const char* name, size_t min, size_t max) const;
  // Any JSON value (required; may be null) as compact text.
  Result<std::string> Raw(const char* name) const;
  // Absent → nullopt; present (even null) → its text.
  std::optional<std::string> OptRaw(const char* name) const;
  // Present, an object, as compact text.
  Result<std::string> RawObject(const char* name) const;
  // Array `name` of at most `max` objects, each read by `read(element)` (a
  // Result<T>, the element's path "name[i]") and appended to `*out`.
  template <typename T, typename Read>
  Status Objects(const char* name, size_t max, std::vector<T>* out, Read&& read) const {
    auto array = ArrayIn(name, 0, max);
    if (!array.ok()) return array.status();
    for (rapidjson::SizeType i = 0; i < (*array)->Size(); ++i) {
      auto element = Of((**array)[i], ElementPath(FieldPath(name), i));
      if (!element.ok()) return element.status();
      auto item = read(*element);
      if (!item.ok()) return item.status();
      out->push_back(std::move(*item));
    }
    return Status::Ok();
  }

 private:
  JsonObject(const rapidjson::Value& v, std::string path) : v_(&v), path_(std::move(path)) {}
  Result<const rapidjson::Value*> Required(const char* name) const;
  Status Refuse(std::string_view name, std::string why) const;

  const rapidjson::Value* v_;
  std::string path_;
};


// Parses `text` as one JSON object (refusals as ParseJson's; the object's
// path is "") and returns what `read(object)` returns, a Result.
template <typename Read>
auto ReadObjectText(std::string_view text, std::string_view what, const JsonLimits& limits, Read&& read)
    -> decltype(read(std::declval<const JsonObject&>())) {
  auto doc = ParseJson(text, what, limits);
  if (!doc.ok()) return doc.status();
  auto object = JsonObject::Of(*doc, "");
  if (!object.ok()) return object.status();
  return read(*object);
}

}  // namespace scimesh
