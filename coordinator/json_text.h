// JSON text of values: compact (as stored and sent) and canonical (object keys
// sorted, so two definitions that differ only in key order compare equal).
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace scimesh::coordinator {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Compact JSON text of `value`, members in their order.
std::string CompactJson(const rapidjson::Value& value);

// Compact JSON text with every object's members sorted by key, recursively.
std::string CanonicalJson(const rapidjson::Value& value);

// Writes a string value (helper for the many writers that need one).
inline void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// Writes already-serialized JSON text (stored compact JSON) as one value.
void WriteRaw(JsonWriter& w, std::string_view json_text);

// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence.
std::string TruncateUtf8(std::string_view text, size_t max_bytes);

}  // namespace scimesh::coordinator
