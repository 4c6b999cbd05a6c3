// The attempt directory <spool>/<run_id>/<step_id>/<attempt>/ (DESIGN.md):
// the only place a step writes, opened so that no name from the wire and no
// planted symlink can lead outside it.
//
// Every level is created with mkdirat and opened with openat(O_NOFOLLOW |
// O_DIRECTORY) from the level above, and every file inside with
// openat(O_NOFOLLOW) after its name passed the protocol's identifier rules.
// An AttemptDir owns a descriptor of the directory; move-only; use from one
// thread at a time.
#pragma once

#include <string>
#include <string_view>

#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"
#include "protocol/wire/wire.h"

namespace scimesh {

class AttemptDir {
 public:
  // Creates (or reopens) the directory for `lease` under `spool` (which must
  // exist), with inputs/ and artifacts/, all 0700. The spool and every level
  // must belong to this user and not be writable by group or others
  // (kPermissionDenied naming the directory otherwise).
  static Result<AttemptDir> Open(const std::string& spool, const Lease& lease);

  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  std::string artifacts_path() const { return path_ + "/artifacts"; }
  std::string state_path() const;
  // inputs/<step_id>/<name>, where a verified input artifact lives.
  std::string InputPath(std::string_view step_id, std::string_view name) const;

  // lease.json (0600): the lease as claimed plus coordinator_url.
  Status WriteLeaseJson(const Lease& lease, std::string_view coordinator_url) const;

  // A fresh temporary file for input artifact `name` of step `step_id`,
  // replacing any leftover; CommitInput renames it into place once verified,
  // DiscardInput removes it.
  Result<UniqueFd> CreateInputTemp(std::string_view step_id, std::string_view name) const;
  Status CommitInput(std::string_view step_id, std::string_view name) const;
  void DiscardInput(std::string_view step_id, std::string_view name) const;

  // artifacts/<name> for writing (created or truncated, 0644), for a body.
  Result<UniqueFd> CreateArtifact(std::string_view name) const;
  // artifacts/<name> for reading: must be a regular file, not a symlink.
  Result<UniqueFd> OpenArtifact(std::string_view name) const;

 private:
  AttemptDir(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  Result<UniqueFd> OpenSubdir(std::string_view name, bool create) const;

  std::string path_;
  UniqueFd fd_;
};

// Opens (creating if asked, 0700) directory `name` under `parent_fd` without
// following a symlink. `name` must be one path component.
Result<UniqueFd> OpenDirectoryAt(int parent_fd, std::string_view name, bool create);

}  // namespace scimesh
