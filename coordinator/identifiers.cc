// Wire identifier checks (protocol/identifiers.h's rules), and CSPRNG-backed
// id issuing.
#include "coordinator/identifiers.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <openssl/rand.h>

#include "protocol/identifiers.h"

namespace scimesh::coordinator {

// The rules themselves are protocol/identifiers.cc's: one set for the client
// and the coordinator (the field name only shapes a message nobody reads here).
bool IsWorkerId(std::string_view s) { return CheckWorkerId(s, "worker_id").ok(); }
bool IsName(std::string_view s) { return CheckIdentifier(s, "name").ok(); }
bool IsArtifactName(std::string_view s) { return CheckArtifactName(s, "name").ok(); }
bool IsSha256Hex(std::string_view s) { return CheckSha256(s, "sha256").ok(); }
bool IsRunId(std::string_view s) { return CheckRunId(s, "run_id").ok(); }
bool IsLeaseId(std::string_view s) { return CheckLeaseId(s, "lease_id").ok(); }

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    std::fputs("scimesh-coordinator: the OpenSSL random generator failed\n", stderr);
    std::abort();
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char b : raw) {
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
  return out;
}

}  // namespace scimesh::coordinator
