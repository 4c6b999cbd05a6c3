// Wire identifier checks (protocol's rules), and CSPRNG-backed id issuing.
#include "coordinator/identifiers.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <openssl/rand.h>

#include "protocol/identifiers.h"

namespace scimesh::coordinator {

// One set of rules for both sides of the wire: the client's
// (protocol/identifiers.h). A name the coordinator accepted and the client
// refused would make the client drop a whole claim.
bool IsWorkerId(std::string_view s) { return CheckWorkerId(s, "").ok(); }
bool IsName(std::string_view s) { return CheckIdentifier(s, "").ok(); }
bool IsArtifactName(std::string_view s) { return CheckArtifactName(s, "").ok(); }
bool IsSha256Hex(std::string_view s) { return CheckSha256(s, "").ok(); }
bool IsRunId(std::string_view s) { return CheckRunId(s, "").ok(); }
bool IsLeaseId(std::string_view s) { return CheckLeaseId(s, "").ok(); }

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
