// placement.json: one writer and one parser for the launcher and the ranks.
#include "protocol/attempt/placement_file.h"

#include "protocol/attempt/attempt_files.h"
#include "protocol/util/json_io.h"

namespace scimesh {
namespace {

Status Invalid(const std::string& what) { return Status::InvalidArgument(std::string(kPlacementFileName) + ": " + what); }

template <typename T>
void WriteList(JsonWriter& w, const char* key, const std::vector<T>& values) {
  w.Key(key);
  w.StartArray();
  for (T v : values) w.Int64(static_cast<int64_t>(v));
  w.EndArray();
}

// Reads array `key` of `r` (absent: empty) with `accept` deciding each element.
template <typename T, typename Accept>
Status ReadList(const rapidjson::Value& r, const char* key, std::vector<T>* out, Accept accept, const char* rule) {
  auto it = r.FindMember(key);
  if (it == r.MemberEnd()) return Status::Ok();
  if (!it->value.IsArray()) return Invalid(std::string("'") + key + "' must be an array");
  for (const auto& v : it->value.GetArray()) {
    if (!v.IsInt64() || !accept(v.GetInt64())) return Invalid(std::string(key) + " " + rule);
    out->push_back(static_cast<T>(v.GetInt64()));
  }
  return Status::Ok();
}

}  // namespace

const PlacementFile::Rank* PlacementFile::Find(int rank) const {
  for (const auto& r : ranks) {
    if (r.rank == rank) return &r;
  }
  return nullptr;
}

std::string SerializePlacementFile(const PlacementFile& file) {
  return ObjectText([&](JsonWriter& w) {
    WriteArray(w, "ranks", file.ranks, [](JsonWriter& rw, const PlacementFile::Rank& r) {
      rw.StartObject();
      WriteInt(rw, "rank", r.rank);
      WriteString(rw, "node", r.node);
      WriteList(rw, "cpus", r.cpus);
      WriteList(rw, "gpus", r.gpus);
      WriteList(rw, "numa", r.numa);
      rw.EndObject();
    });
  });
}

Result<PlacementFile> ParsePlacementFile(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, kPlacementFileName));
  if (!doc.IsObject()) return Invalid("not a JSON object");
  auto ranks = doc.FindMember("ranks");
  if (ranks == doc.MemberEnd() || !ranks->value.IsArray()) return Invalid("'ranks' must be an array");
  PlacementFile f;
  for (const auto& r : ranks->value.GetArray()) {
    if (!r.IsObject() || !r.HasMember("rank") || !r["rank"].IsInt()) {
      return Invalid("every entry needs an integer 'rank'");
    }
    PlacementFile::Rank out;
    out.rank = r["rank"].GetInt();
    if (r.HasMember("node") && r["node"].IsString()) out.node = r["node"].GetString();
    auto non_negative = [](int64_t v) { return v >= 0 && v < (int64_t{1} << 31); };
    SCIMESH_RETURN_IF_ERROR(ReadList(r, "cpus", &out.cpus, non_negative, "must be unsigned integers"));
    SCIMESH_RETURN_IF_ERROR(ReadList(r, "gpus", &out.gpus, non_negative, "must be >= 0"));
    SCIMESH_RETURN_IF_ERROR(ReadList(r, "numa", &out.numa, non_negative, "must be >= 0"));
    f.ranks.push_back(std::move(out));
  }
  return f;
}

Result<std::optional<PlacementFile>> ReadPlacementFileAt(int dir_fd, uid_t owner) {
  auto text = ReadAttemptFile(dir_fd, kPlacementFileName, owner, kMaxPlacementFileBytes);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) return std::optional<PlacementFile>();
    return text.status();
  }
  SCIMESH_ASSIGN_OR_RETURN(PlacementFile f, ParsePlacementFile(*text));
  return std::optional<PlacementFile>(std::move(f));
}

}  // namespace scimesh
