// Member lists shared between the wire JSON translation units (not a public
// API): each is read and written through json_members.h, so the rules below
// hold wherever the object appears.
#pragma once

#include <cstdint>
#include <optional>

#include "protocol/util/json_members.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {

// An artifact reference (ArtifactRef; an InputArtifact's members after its
// step_id): a safe name, a URI, a SHA-256, a size, a media type.
inline constexpr auto kArtifactMembers = [](auto& m, auto& a) {
  m.String("name", a.name, CheckArtifactName);
  m.StringIn("uri", a.uri, 1, kMaxUriBytes);
  m.String("sha256", a.sha256, CheckSha256);
  m.IntIn("size", a.size, 0, INT64_MAX);
  m.StringIn("media_type", a.media_type, 1, kMaxMediaTypeBytes);
};

// A step's shape as a lease and the demand answer write it: every member
// present, in range (nodes, ranks_per_node, cpus_per_rank >= 1; gpus >= 0).
inline constexpr auto kStepResourcesMembers = [](auto& m, auto& r) {
  m.Int("nodes", r.nodes);
  m.Int("ranks_per_node", r.ranks_per_node);
  m.Int("cpus_per_rank", r.cpus_per_rank);
  m.Int("gpus_per_rank", r.gpus_per_rank);
  m.Check([&](const JsonObject& o) {
    if (r.nodes >= 1 && r.ranks_per_node >= 1 && r.cpus_per_rank >= 1 && r.gpus_per_rank >= 0) {
      return Status::Ok();
    }
    return Status::InvalidArgument(o.path() + ": resources out of range");
  });
};

// Why a step fits no live worker (a step view's and a demand group's
// `unfittable`; null when it fits).
inline constexpr auto kUnfittableMembers = [](auto& m, auto& u) {
  m.String("reason", u.reason);
  m.Int("workers", u.workers);
};

// The first members of a run as the run list and a run's view show it.
inline constexpr auto kRunHeadMembers = [](auto& m, auto& r) {
  m.String("run_id", r.run_id);
  m.String("workflow", r.workflow);
  m.String("version", r.version);
  m.String("status", r.status);
};

}  // namespace scimesh
