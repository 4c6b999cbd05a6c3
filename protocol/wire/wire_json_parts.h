// Pieces shared between the wire JSON translation units (not a public API).
#pragma once

#include <optional>

#include "protocol/util/json_io.h"
#include "protocol/wire/wire.h"

namespace scimesh {

// String member `name` of `o` that must be an identifier (identifiers.h).
Result<std::string> IdentifierFrom(const JsonObject& o, const char* name);
Result<ArtifactRef> ArtifactRefFrom(const JsonObject& o);
void WriteArtifactRef(JsonWriter& w, const ArtifactRef& a);
// The members of an artifact reference, without the braces (an input
// artifact writes its step_id first).
void WriteArtifactMembers(JsonWriter& w, const ArtifactRef& a);
// A step's shape as a lease and the demand answer write it: every member
// present, in range (nodes, ranks_per_node, cpus_per_rank >= 1; gpus >= 0).
Result<Resources> StepResourcesFrom(const JsonObject& o);
void WriteResources(JsonWriter& w, const Resources& r);
// A step's `unfittable` member of `o` (absent or null: none), and writing it.
Result<std::optional<UnfittableView>> UnfittableFrom(const JsonObject& o);
void WriteUnfittable(JsonWriter& w, const std::optional<UnfittableView>& u);

}  // namespace scimesh
