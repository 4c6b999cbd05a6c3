// JSON text the coordinator needs beyond protocol/json_io.h (compact text,
// raw embedding and the writer type are protocol/'s): sorted-key JSON, so two
// definitions that differ only in key order compare equal; a bare string
// value; and stored JSON text read back as a heap document.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "protocol/util/json_io.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh::coordinator {

// Compact JSON text with every object's members sorted by key, recursively.
std::string SortedKeysJson(const rapidjson::Value& value);

// Writes a string value (helper for the many writers that need one).
inline void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// Parses JSON text the coordinator stored or received (protocol/json_io.h's
// ParseJson under the server's limits) into a document the caller owns.
Result<std::unique_ptr<rapidjson::Document>> ParseJson(std::string_view text,
                                                       const JsonLimits& limits = kServerJsonLimits);

}  // namespace scimesh::coordinator
