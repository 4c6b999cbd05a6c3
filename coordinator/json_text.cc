// Sorted-key JSON serialization and UTF-8-safe cuts.
#include "coordinator/json_text.h"

#include <algorithm>
#include <vector>

namespace scimesh::coordinator {
namespace {

void WriteCanonical(JsonWriter& w, const rapidjson::Value& v) {
  if (v.IsObject()) {
    std::vector<const rapidjson::Value::Member*> members;
    members.reserve(v.MemberCount());
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) members.push_back(&*it);
    std::sort(members.begin(), members.end(), [](auto* a, auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    w.StartObject();
    for (auto* m : members) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      WriteCanonical(w, m->value);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const auto& e : v.GetArray()) WriteCanonical(w, e);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

}  // namespace

std::string SortedKeysJson(const rapidjson::Value& value) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  WriteCanonical(w, value);
  return std::string(buf.GetString(), buf.GetSize());
}

Result<std::unique_ptr<rapidjson::Document>> ParseJson(std::string_view text, const JsonLimits& limits) {
  auto doc = scimesh::ParseJson(text, "JSON", limits);
  if (!doc.ok()) return doc.status();
  return std::make_unique<rapidjson::Document>(std::move(*doc));
}

}  // namespace scimesh::coordinator
