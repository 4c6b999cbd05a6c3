// JSON for GET /v1/api/runs: the runs a key may read, newest first.
#include "protocol/util/json_io.h"
#include "protocol/wire/wire_json.h"

namespace scimesh {

std::string SerializeRunList(const RunList& list) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("runs");
  w.StartArray();
  for (const auto& r : list.runs) {
    w.StartObject();
    WriteString(w, "run_id", r.run_id);
    WriteString(w, "workflow", r.workflow);
    WriteString(w, "version", r.version);
    WriteString(w, "status", r.status);
    WriteRaw(w, "correlation", r.correlation_json);
    WriteString(w, "created_at", r.created_at);
    WriteOptString(w, "finished_at", r.finished_at);
    w.EndObject();
  }
  w.EndArray();
  w.Key("more");
  w.Bool(list.more);
  w.EndObject();
  return JsonText(buf);
}

Result<RunList> ParseRunList(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "run list"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  RunList list;
  SCIMESH_ASSIGN_OR_RETURN(const rapidjson::Value* runs, o.Array("runs"));
  for (rapidjson::SizeType i = 0; i < runs->Size(); ++i) {
    SCIMESH_ASSIGN_OR_RETURN(JsonObject ro, JsonObject::Of((*runs)[i], ElementPath("runs", i)));
    RunSummary r;
    SCIMESH_ASSIGN_OR_RETURN(r.run_id, ro.String("run_id"));
    SCIMESH_ASSIGN_OR_RETURN(r.workflow, ro.String("workflow"));
    SCIMESH_ASSIGN_OR_RETURN(r.version, ro.String("version"));
    SCIMESH_ASSIGN_OR_RETURN(r.status, ro.String("status"));
    r.correlation_json = ro.OptRaw("correlation").value_or("null");
    SCIMESH_ASSIGN_OR_RETURN(r.created_at, ro.String("created_at"));
    SCIMESH_ASSIGN_OR_RETURN(r.finished_at, ro.OptString("finished_at"));
    list.runs.push_back(std::move(r));
  }
  SCIMESH_ASSIGN_OR_RETURN(list.more, o.Bool("more"));
  return list;
}

}  // namespace scimesh
