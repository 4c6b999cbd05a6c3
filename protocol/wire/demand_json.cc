// JSON for GET /v1/api/demand: the queued work per step of the workflows a
// worker key serves (docs/protocol.md "demand").
#include "protocol/util/json_io.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

void WriteGroup(JsonWriter& w, const DemandGroup& g) {
  w.StartObject();
  WriteString(w, "workflow", g.workflow);
  WriteString(w, "version", g.version);
  WriteString(w, "step_id", g.step_id);
  w.Key("resources");
  WriteResources(w, g.resources);
  WriteInt(w, "walltime_s", g.walltime_s);
  WriteInt(w, "runnable", g.runnable);
  WriteInt(w, "backing_off", g.backing_off);
  WriteInt(w, "waiting", g.waiting);
  WriteInt(w, "running", g.running);
  WriteInt(w, "live_workers", g.live_workers);
  WriteOptInt(w, "claimable_by_live_workers", g.claimable_by_live_workers);
  WriteUnfittable(w, g.unfittable);
  w.EndObject();
}

Result<DemandGroup> GroupFrom(const JsonObject& o) {
  DemandGroup g;
  SCIMESH_ASSIGN_OR_RETURN(g.workflow, IdentifierFrom(o, "workflow"));
  SCIMESH_ASSIGN_OR_RETURN(g.version, IdentifierFrom(o, "version"));
  SCIMESH_ASSIGN_OR_RETURN(g.step_id, IdentifierFrom(o, "step_id"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject resources, o.Object("resources"));
  SCIMESH_ASSIGN_OR_RETURN(g.resources, StepResourcesFrom(resources));
  SCIMESH_ASSIGN_OR_RETURN(g.walltime_s, o.IntIn("walltime_s", 1, kMaxStepWalltimeS));
  SCIMESH_ASSIGN_OR_RETURN(g.runnable, o.IntIn("runnable", 0, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(g.backing_off, o.IntIn("backing_off", 0, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(g.waiting, o.IntIn("waiting", 0, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(g.running, o.IntIn("running", 0, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(g.live_workers, o.IntIn("live_workers", 0, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(g.claimable_by_live_workers, o.OptIntIn("claimable_by_live_workers", 0, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(g.unfittable, UnfittableFrom(o));
  return g;
}

}  // namespace

std::string SerializeQueuedDemand(const QueuedDemand& d) {
  return ObjectText([&](JsonWriter& w) {
    WriteArray(w, "groups", d.groups, WriteGroup);
    WriteBool(w, "more", d.more);
    WriteString(w, "at", d.at);
  });
}

Result<QueuedDemand> ParseQueuedDemand(std::string_view json) {
  return ReadObjectText(json, "demand", {}, [](const JsonObject& o) -> Result<QueuedDemand> {
    QueuedDemand d;
    SCIMESH_RETURN_IF_ERROR(o.Objects("groups", kMaxDemandGroups, &d.groups, GroupFrom));
    SCIMESH_ASSIGN_OR_RETURN(d.more, o.Bool("more"));
    SCIMESH_ASSIGN_OR_RETURN(d.at, o.String("at"));
    return d;
  });
}

}  // namespace scimesh
