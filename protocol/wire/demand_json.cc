// JSON for GET /v1/api/demand: the queued work per step of the workflows a
// worker key serves (docs/protocol.md "demand").
#include "protocol/util/json_members.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

constexpr auto kGroupMembers = [](auto& m, auto& g) {
  m.String("workflow", g.workflow, CheckIdentifier);
  m.String("version", g.version, CheckIdentifier);
  m.String("step_id", g.step_id, CheckIdentifier);
  m.Object("resources", g.resources, kStepResourcesMembers);
  m.IntIn("walltime_s", g.walltime_s, 1, kMaxStepWalltimeS);
  m.IntIn("runnable", g.runnable, 0, kMaxWireInt);
  m.IntIn("backing_off", g.backing_off, 0, kMaxWireInt);
  m.IntIn("waiting", g.waiting, 0, kMaxWireInt);
  m.IntIn("running", g.running, 0, kMaxWireInt);
  m.IntIn("live_workers", g.live_workers, 0, kMaxWireInt);
  m.OptIntIn("claimable_by_live_workers", g.claimable_by_live_workers, 0, kMaxWireInt);
  m.OptObject("unfittable", g.unfittable, kUnfittableMembers);
};

constexpr auto kDemandMembers = [](auto& m, auto& d) {
  m.Objects("groups", d.groups, kGroupMembers, kMaxDemandGroups);
  m.Bool("more", d.more);
  m.String("at", d.at);
};

}  // namespace

std::string SerializeQueuedDemand(const QueuedDemand& d) { return MembersText(d, kDemandMembers); }

Result<QueuedDemand> ParseQueuedDemand(std::string_view json) {
  return ParseMembers<QueuedDemand>(json, "demand", {}, kDemandMembers);
}

}  // namespace scimesh
