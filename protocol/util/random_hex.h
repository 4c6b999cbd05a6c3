// Random secrets and ids as lowercase hex, from OpenSSL's CSPRNG (the
// coordinator's run, lease and key ids; the launcher's node-agent secrets).
// Thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace scimesh {

// Lowercase hex of `bytes` random bytes. Aborts the process if the CSPRNG
// fails (ids must never repeat, secrets never be guessable).
std::string RandomHex(size_t bytes);

}  // namespace scimesh
