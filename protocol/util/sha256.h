// Streaming SHA-256 (OpenSSL EVP), as the protocol's checksums are written:
// 64 lowercase hex digits.
//
// A Sha256 is used by one thread at a time; it owns its EVP context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/util/status.h"

namespace scimesh {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(const void* data, size_t size);
  void Update(std::string_view data) { Update(data.data(), data.size()); }
  // The digest of everything so far; the hasher restarts afterwards.
  std::string HexDigest();
  // Forgets everything so far (a retried download starts over).
  void Reset();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// The digest of a whole string.
std::string Sha256Hex(std::string_view data);

struct FileDigest {
  std::string sha256;
  int64_t size = 0;
};

// Reads `fd` from offset 0 to its end with pread (the offset is untouched).
Result<FileDigest> Sha256OfFd(int fd);

}  // namespace scimesh
