// Keys: the keys file ("NAME SCOPES SHA256-OF-SECRET [workflows=GLOB,..]" per
// line), scopes, and the KeyRing that identifies a bearer token. Secrets are
// never stored: only their SHA-256, compared in constant time against every key.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/clock.h"
#include "protocol/util/status.h"

namespace scimesh::coordinator {

enum Scope : unsigned {
  kScopeWorker = 1u << 0,   // worker calls, artifact download
  kScopeExecute = 1u << 1,  // run API, artifact download
  kScopeAdmin = 1u << 2,    // everything, and any lease
  kScopeRead = 1u << 3,     // reads every run and artifact (dashboards); changes nothing
};

// "worker,execute" -> bits; InvalidArgument names the unknown scope.
Result<unsigned> ParseScopes(std::string_view text);
// bits -> "worker,execute,admin,read" (in that order).
std::string ScopesText(unsigned scopes);

struct KeyIdentity {
  std::string name;
  unsigned scopes = 0;
  // The workflows this key may register (globs on the name, `*` and `?`);
  // empty: those it registered first (see coordinator/tenancy.h).
  std::vector<std::string> workflows = {};

  bool admin() const { return (scopes & kScopeAdmin) != 0; }
  // True when the key holds any of `any_of` (admin holds every scope).
  bool Allows(unsigned any_of) const { return admin() || (scopes & any_of) != 0; }
};

// The keys of one keys file. Thread-safe. Re-reads the file when it changed
// (checked at most once a second on `clock`, a monotonic clock), so `keys
// add` takes effect without a restart; a file that became unreadable or
// invalid keeps the last good keys.
class KeyRing {
 public:
  // `clock` is borrowed and must outlive the ring.
  static Result<std::unique_ptr<KeyRing>> Load(const std::string& path, const Clock& clock = SteadyClock());

  // The key whose secret is `token`, or nullopt. Time does not depend on
  // which key matched or where the digests differ.
  std::optional<KeyIdentity> Identify(std::string_view token);

  size_t size();

 private:
  struct Entry {
    KeyIdentity id;
    std::string sha256_hex;
  };
  struct FileStamp {
    int64_t mtime_ns = 0;
    int64_t size = 0;
    uint64_t inode = 0;
    bool operator==(const FileStamp&) const = default;
  };

  KeyRing(std::string path, const Clock& clock) : path_(std::move(path)), clock_(clock) {}
  static Result<std::vector<Entry>> ReadFile(const std::string& path);
  static Result<FileStamp> Stamp(const std::string& path);
  void MaybeReload();

  const std::string path_;
  const Clock& clock_;
  std::mutex mu_;
  std::vector<Entry> entries_;
  FileStamp stamp_;
  MonoTime last_check_;
};

// "chem-*,qc?" -> the globs; InvalidArgument when empty or a glob holds
// anything but [A-Za-z0-9._-*?] (at most 64 characters each, 32 globs).
Result<std::vector<std::string>> ParseWorkflowGlobs(std::string_view text);

// `keys add`: appends "NAME SCOPES sha256(secret)" (and " workflows=GLOBS"
// when `workflows` is not empty) to the keys file (created 0600) and writes
// the new secret to `secret_out` (created 0600). Refuses a name already in
// the file. Returns "added key NAME (SCOPES)"; the secret is never returned,
// printed or logged.
Result<std::string> AddKey(const std::string& keys_path, const std::string& name, const std::string& scopes,
                           const std::string& secret_out, const std::string& workflows = "");

}  // namespace scimesh::coordinator
