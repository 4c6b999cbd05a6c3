// Issuing and verifying lease tokens: an HMAC under a secret kept beside the database.
#include "coordinator/lease_tokens.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "protocol/util/unique_fd.h"
#include "protocol/wire/identifiers.h"

namespace scimesh::coordinator {
namespace {

constexpr size_t kSecretHex = 64;
constexpr char kPrefix[] = "lt_";

std::string Hex(const unsigned char* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

bool IsHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Result<std::string> CreateSecret(const std::string& path) {
  unsigned char bytes[kSecretHex / 2];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return Status::Internal("no random bytes for the lease secret");
  const std::string secret = Hex(bytes, sizeof bytes);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Status::Io(std::string("cannot create the lease secret: ") + std::strerror(errno));
  const std::string line = secret + "\n";
  if (::write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()) || ::fsync(fd.get()) != 0) {
    return Status::Io(std::string("cannot write the lease secret: ") + std::strerror(errno));
  }
  return secret;
}

}  // namespace

Result<LeaseTokens> LeaseTokens::Open(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() && errno == ENOENT) {
    SCIMESH_ASSIGN_OR_RETURN(std::string secret, CreateSecret(path));
    return LeaseTokens(std::move(secret));
  }
  if (!fd.valid()) return Status::Io(std::string("cannot open the lease secret: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return Status::PermissionDenied("the lease secret is not a regular file of this user");
  }
  if ((st.st_mode & 077) != 0) {
    return Status::PermissionDenied("the lease secret is readable or writable by others (chmod 600 it)");
  }
  char buf[kSecretHex + 2] = {};
  const ssize_t n = ::read(fd.get(), buf, sizeof buf);
  std::string_view text(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (text.size() != kSecretHex || !IsHex(text)) {
    return Status::InvalidArgument("the lease secret is not 64 lowercase hex digits");
  }
  return LeaseTokens(std::string(text));
}

std::string LeaseTokens::Mac(std::string_view lease_id, int64_t attempt) const {
  const std::string message = std::string(lease_id) + "/" + std::to_string(attempt);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  return Hex(mac, len);
}

std::string LeaseTokens::Issue(std::string_view lease_id, int64_t attempt) const {
  return kPrefix + std::string(lease_id) + "_" + std::to_string(attempt) + "_" + Mac(lease_id, attempt);
}

std::optional<LeaseTokens::Grant> LeaseTokens::Verify(std::string_view token) const {
  if (!LooksLikeOne(token) || token.size() > 256) return std::nullopt;
  token.remove_prefix(sizeof kPrefix - 1);
  // <lease_id>_<attempt>_<mac>; a lease id is "l_" + 16 hex.
  const size_t mac_at = token.rfind('_');
  if (mac_at == std::string_view::npos) return std::nullopt;
  const std::string_view mac = token.substr(mac_at + 1);
  token = token.substr(0, mac_at);
  const size_t attempt_at = token.rfind('_');
  if (attempt_at == std::string_view::npos) return std::nullopt;
  Grant grant{std::string(token.substr(0, attempt_at)), 0};
  const std::string_view attempt = token.substr(attempt_at + 1);
  auto [end, ec] = std::from_chars(attempt.data(), attempt.data() + attempt.size(), grant.attempt);
  if (ec != std::errc() || end != attempt.data() + attempt.size() || grant.attempt < 1) return std::nullopt;
  if (!CheckLeaseId(grant.lease_id, "lease_id").ok()) return std::nullopt;
  const std::string expected = Mac(grant.lease_id, grant.attempt);
  if (mac.size() != expected.size() || CRYPTO_memcmp(mac.data(), expected.data(), expected.size()) != 0) {
    return std::nullopt;
  }
  return grant;
}

}  // namespace scimesh::coordinator
