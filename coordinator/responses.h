// The error body (docs/protocol.md "Errors") of an ApiError, written by
// protocol/'s serializer. Every other reply is a protocol/wire.h type that the
// Ledger fills and the routes write with protocol/wire_json.h (one wire model
// with the client). Pure; thread-safe.
#pragma once

#include <string>

#include "coordinator/api_error.h"

namespace scimesh::coordinator {

std::string ToJson(const ApiError& e);

}  // namespace scimesh::coordinator
