// Random hex from OpenSSL's CSPRNG.
#include "protocol/util/random_hex.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <openssl/rand.h>

namespace scimesh {

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    std::fputs("scimesh: the OpenSSL random generator failed\n", stderr);
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

}  // namespace scimesh
