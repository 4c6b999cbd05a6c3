// Character-class checks for wire identifiers, and CSPRNG-backed id issuing.
#include "coordinator/identifiers.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <openssl/rand.h>

namespace scimesh::coordinator {
namespace {

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

template <typename Pred>
bool AllOf(std::string_view s, size_t min, size_t max, Pred ok) {
  if (s.size() < min || s.size() > max) return false;
  for (char c : s) {
    if (!ok(c)) return false;
  }
  return true;
}

bool IsPrefixedHex(std::string_view s, std::string_view prefix) {
  return s.size() == prefix.size() + 16 && s.substr(0, prefix.size()) == prefix &&
         AllOf(s.substr(prefix.size()), 16, 16, IsLowerHex);
}

}  // namespace

bool IsWorkerId(std::string_view s) {
  return AllOf(s, 1, 128, [](char c) {
    return IsAlnum(c) || c == '.' || c == '_' || c == ':' || c == '@' || c == '/' || c == '-';
  });
}

bool IsName(std::string_view s) {
  return AllOf(s, 1, 64, [](char c) { return IsAlnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool IsArtifactName(std::string_view s) {
  return !s.empty() && s.front() != '.' &&
         AllOf(s, 1, 128, [](char c) { return IsAlnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool IsSha256Hex(std::string_view s) { return AllOf(s, 64, 64, IsLowerHex); }
bool IsRunId(std::string_view s) { return IsPrefixedHex(s, "r_"); }
bool IsLeaseId(std::string_view s) { return IsPrefixedHex(s, "l_"); }

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
