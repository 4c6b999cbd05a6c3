// The coordinator hashes with the protocol's SHA-256 (protocol/sha256.h): one
// implementation for the client and the coordinator. This header keeps the
// coordinator's includes and its unqualified names (Sha256, Sha256Hex).
#pragma once

#include "protocol/sha256.h"

namespace scimesh::coordinator {

using scimesh::Sha256;
using scimesh::Sha256Hex;

}  // namespace scimesh::coordinator
