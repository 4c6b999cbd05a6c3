// The bearer token: loaded from SCIMESH_TOKEN_FILE or SCIMESH_TOKEN, never
// from argv, never printed.
//
// A Token is a copyable value. It has no stream operator on purpose; the only
// way to the secret is secret(), used to build the Authorization header.
// Loading a token registers it with the log redactor (protocol/log.h), so it
// cannot reach any scimesh log line even by accident.
#pragma once

#include <string>
#include <string_view>

#include "protocol/util/status.h"

namespace scimesh {

class Token {
 public:
  Token() = default;
  // Registers `secret` with the log redactor.
  explicit Token(std::string secret);

  bool empty() const { return secret_.empty(); }
  const std::string& secret() const { return secret_; }

 private:
  std::string secret_;
};

// Reads a token file: a regular file not readable or writable by group or
// others (chmod 600), at most 4 KiB, one token of visible ASCII, surrounding
// whitespace ignored. Errors name the path, the variable and the cause
// ("cannot open the token file /x (SCIMESH_TOKEN_FILE): No such file or
// directory"): the path is the user's own setting, shown back to them.
Result<Token> LoadTokenFile(const std::string& path);

// SCIMESH_TOKEN_FILE if set (preferred), else SCIMESH_TOKEN; kNotFound if neither.
Result<Token> LoadTokenFromEnvironment();

// The environment variables that lead to the key. A process that does not
// talk to the coordinator itself (a step's program) must not inherit them.
inline constexpr const char* kTokenVariables[] = {"SCIMESH_TOKEN", "SCIMESH_TOKEN_FILE"};
// True when `entry` ("NAME=value", or a bare NAME) is one of kTokenVariables.
bool IsTokenVariable(std::string_view entry);

// Marks this process as holding the key: not dumpable (no core file, no
// ptrace or /proc/<pid>/mem by other processes of the same user). execve of
// another program resets it. Thread-safe; failures are reported.
Status ProtectKeyHolder();

}  // namespace scimesh
