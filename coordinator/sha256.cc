// SHA-256 over OpenSSL's EVP interface.
#include "coordinator/sha256.h"

#include <cstdio>
#include <cstdlib>

#include <openssl/evp.h>

namespace scimesh::coordinator {

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
};

namespace {
[[noreturn]] void Die(const char* what) {
  // EVP failing for SHA-256 means the crypto library is broken: nothing sane to do.
  std::fprintf(stderr, "scimesh-coordinator: OpenSSL %s failed\n", what);
  std::abort();
}
}  // namespace

Sha256::Sha256() : ctx_(std::make_unique<Context>()) {
  ctx_->md = EVP_MD_CTX_new();
  if (ctx_->md == nullptr || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1) Die("SHA-256 init");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_->md); }

void Sha256::Update(const void* data, size_t size) {
  if (size > 0 && EVP_DigestUpdate(ctx_->md, data, size) != 1) Die("SHA-256 update");
}

std::string Sha256::FinishHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_->md, digest, &n) != 1) Die("SHA-256 final");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xF];
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  Sha256 h;
  h.Update(data.data(), data.size());
  return h.FinishHex();
}

}  // namespace scimesh::coordinator
