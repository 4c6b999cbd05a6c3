// SHA-256 with OpenSSL EVP, incrementally (artifacts are hashed while they
// stream in) or in one go (key secrets). Not thread-safe per instance.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace scimesh::coordinator {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(const void* data, size_t size);
  // 64 lowercase hex digits. Call once; the hasher is spent afterwards.
  std::string FinishHex();

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
};

// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace scimesh::coordinator
