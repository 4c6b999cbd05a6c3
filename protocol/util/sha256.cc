// SHA-256 on OpenSSL EVP.
#include "protocol/util/sha256.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace scimesh {

struct Sha256::Ctx {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) { Reset(); }
Sha256::~Sha256() = default;

void Sha256::Reset() { EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr); }

void Sha256::Update(const void* data, size_t size) { EVP_DigestUpdate(ctx_->md, data, size); }

std::string Sha256::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, digest, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size_t{len} * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  Reset();
  return out;
}

std::string Sha256Hex(std::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.HexDigest();
}

Result<FileDigest> Sha256OfFd(int fd) {
  Sha256 h;
  std::vector<char> buf(1 << 16);
  FileDigest d;
  for (;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), d.size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Io("reading a file to hash it failed");
    if (n == 0) break;
    h.Update(buf.data(), static_cast<size_t>(n));
    d.size += n;
  }
  d.sha256 = h.HexDigest();
  return d;
}

}  // namespace scimesh
