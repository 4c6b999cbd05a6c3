// Writing a small file atomically: a reader sees the old content or the new
// one, never a torn mix (write a temporary file beside it, then rename).
//
// Thread-safe: concurrent writers use distinct temporary names.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "protocol/status.h"

namespace scimesh {

// Writes `content` to `name` in directory `dir_fd` (AT_FDCWD: relative to the
// working directory) with `mode`. Refuses to write through a symlink.
// No fsync: these files describe live processes and mean nothing after a
// machine crash, and an fsync per heartbeat on a shared filesystem is costly.
Status WriteFileAtomically(int dir_fd, const std::string& name, std::string_view content, mode_t mode);

// The same for a path.
Status WriteFileAtomically(const std::string& path, std::string_view content, mode_t mode);

}  // namespace scimesh
