// JSON text the coordinator needs beyond protocol/json_io.h (compact text,
// raw embedding and the writer type are protocol/'s): sorted-key JSON, so two
// definitions that differ only in key order compare equal; a bare string
// value; and UTF-8-safe cuts.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "protocol/json_io.h"

namespace scimesh::coordinator {

// Compact JSON text with every object's members sorted by key, recursively.
std::string SortedKeysJson(const rapidjson::Value& value);

// Writes a string value (helper for the many writers that need one).
inline void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence.
std::string TruncateUtf8(std::string_view text, size_t max_bytes);

}  // namespace scimesh::coordinator
