// JSON for GET /v1/api/runs: the runs a key may read, newest first.
#include "protocol/util/json_io.h"
#include "protocol/wire/wire_json.h"

namespace scimesh {
namespace {

void WriteSummary(JsonWriter& w, const RunSummary& r) {
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

Result<RunSummary> SummaryFrom(const JsonObject& o) {
  RunSummary r;
  SCIMESH_ASSIGN_OR_RETURN(r.run_id, o.String("run_id"));
  SCIMESH_ASSIGN_OR_RETURN(r.workflow, o.String("workflow"));
  SCIMESH_ASSIGN_OR_RETURN(r.version, o.String("version"));
  SCIMESH_ASSIGN_OR_RETURN(r.status, o.String("status"));
  r.correlation_json = o.OptRaw("correlation").value_or("null");
  SCIMESH_ASSIGN_OR_RETURN(r.created_at, o.String("created_at"));
  SCIMESH_ASSIGN_OR_RETURN(r.finished_at, o.OptString("finished_at"));
  return r;
}

}  // namespace

std::string SerializeRunList(const RunList& list) {
  return ObjectText([&](JsonWriter& w) {
    WriteArray(w, "runs", list.runs, WriteSummary);
    WriteBool(w, "more", list.more);
  });
}

Result<RunList> ParseRunList(std::string_view json) {
  return ReadObjectText(json, "run list", {}, [](const JsonObject& o) -> Result<RunList> {
    RunList list;
    SCIMESH_RETURN_IF_ERROR(o.Objects("runs", SIZE_MAX, &list.runs, SummaryFrom));
    SCIMESH_ASSIGN_OR_RETURN(list.more, o.Bool("more"));
    return list;
  });
}

}  // namespace scimesh
