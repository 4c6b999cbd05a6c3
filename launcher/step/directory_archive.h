// Directory artifacts: a directory a step leaves under artifacts/ travels as
// one ustar archive (its own small writer and reader: directories and regular
// files only), and is unpacked as inputs/<step>/<name>/ for the steps that
// need it -- after every header of the archive was checked.
//
// Free functions; thread-safe (each works on the descriptors it is given).
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/util/status.h"

namespace scimesh::launcher {

// The media type that marks an artifact as a packed directory (docs/protocol.md
// "Artifacts"): the wire carries it like any other artifact.
inline constexpr char kDirectoryArtifactMediaType[] = "application/vnd.scimesh.directory+tar";

struct ArchiveLimits {
  uint64_t max_bytes = uint64_t{4} << 30;  // the files' sizes added up (ustar: < 8 GiB a file)
  size_t max_entries = 100000;             // files and directories
};

// Writes the tree under `dir_fd` to `out_fd` as a ustar archive: entries in
// sorted order, mode 0755/0644, owner 0, mtime 0, so the same tree gives the
// same bytes and SHA-256. Entries are opened relative to their directory
// without following links. Refused, naming the entry: a symlink, device,
// FIFO or socket; a name over 255 bytes; a tree over `limits`.
Status PackDirectory(int dir_fd, int out_fd, const ArchiveLimits& limits = {});

// Checks the whole archive `archive_fd` (read from offset 0) first: valid
// ustar headers and checksums; regular files and directories only (no
// symlink, hard link, device or FIFO); relative names with no `..`, `.` or
// empty component; sizes within the file and `limits`. Only then unpacks it
// under `dest_fd` (which should be empty), every path opened relative to it
// with O_NOFOLLOW and files created O_EXCL. An error names the entry and why.
Status UnpackArchive(int archive_fd, int dest_fd, const ArchiveLimits& limits = {});

}  // namespace scimesh::launcher
