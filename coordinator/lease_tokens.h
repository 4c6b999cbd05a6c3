// LeaseTokens: the credential of one lease and attempt (docs/protocol.md,
// "The lease token"). A token is `lt_<lease_id>_<attempt>_<mac>`, the MAC an
// HMAC-SHA256 of "<lease_id>/<attempt>" under the coordinator's secret, so it
// is verified without a database read (on the connection thread too) and
// stays valid across restarts. What it allows is decided by its caller: the
// calls of that lease alone.
// Immutable once opened: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/util/status.h"

namespace scimesh::coordinator {

class LeaseTokens {
 public:
  // Reads the secret from `path` (64 hex digits, a regular file of this user,
  // not readable by group or others), creating it 0600 when absent.
  static Result<LeaseTokens> Open(const std::string& path);
  // With a given secret (tests).
  explicit LeaseTokens(std::string secret) : secret_(std::move(secret)) {}

  std::string Issue(std::string_view lease_id, int64_t attempt) const;

  struct Grant {
    std::string lease_id;
    int64_t attempt = 0;
  };
  // The lease and attempt `token` was issued for; nullopt when it is no
  // token of this coordinator's (compared in constant time).
  std::optional<Grant> Verify(std::string_view token) const;

  // Whether `token` has a lease token's form (a key never does).
  static bool LooksLikeOne(std::string_view token) { return token.starts_with("lt_"); }

 private:
  std::string Mac(std::string_view lease_id, int64_t attempt) const;
  std::string secret_;
};

}  // namespace scimesh::coordinator
