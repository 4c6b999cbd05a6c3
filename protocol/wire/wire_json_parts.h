// Pieces shared between the wire JSON translation units (not a public API).
#pragma once

#include "protocol/util/json_io.h"
#include "protocol/wire/wire.h"

namespace scimesh {

Result<ArtifactRef> ArtifactRefFrom(const JsonObject& o);
void WriteArtifactRef(JsonWriter& w, const ArtifactRef& a);

}  // namespace scimesh
