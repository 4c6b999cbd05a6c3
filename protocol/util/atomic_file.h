// Writing files so that readers never see a torn one: the one WriteAll, and
// atomic replacement (a temporary file beside the target, then rename), with
// an fsync before the rename when the content must survive a machine crash.
//
// Thread-safe: concurrent writers use distinct temporary names.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "protocol/util/status.h"

namespace scimesh {

// Whether a replacement is fsync'ed before the rename. kVolatile for files
// that describe live processes (lease.state: an fsync per heartbeat on a
// shared filesystem is costly, and they mean nothing after a crash);
// kDurable for results and configuration.
enum class Durability { kVolatile, kDurable };

// write() until all of `data` is written; EINTR-safe. kIo with errno's text.
Status WriteAll(int fd, std::string_view data);

// Writes `content` to `name` in directory `dir_fd` (AT_FDCWD: relative to the
// working directory) with `mode` (the umask does not apply). Refuses to write
// through a symlink at `name`'s place. Messages name the file's last
// component only.
Status WriteFileAtomically(int dir_fd, const std::string& name, std::string_view content, mode_t mode,
                           Durability durability = Durability::kVolatile);

// The same for a path.
Status WriteFileAtomically(const std::string& path, std::string_view content, mode_t mode,
                           Durability durability = Durability::kVolatile);

// Creates `name` in `dir_fd` with `content` only if nothing is there: the
// same temporary file, then link() instead of rename(), so `name` appears
// whole and once, whoever else tries at the same time (on any host sharing
// the filesystem). kAlreadyExists when `name` exists, whatever it is (a
// symlink planted there is neither followed nor replaced).
Status CreateFileExclusively(int dir_fd, const std::string& name, std::string_view content, mode_t mode,
                             Durability durability);

// Streams file `source` into `dest` the same way (large files, never whole
// in memory). kNotFound when `source` cannot be opened.
Status CopyFileAtomically(const std::string& source, const std::string& dest, mode_t mode, Durability durability);

}  // namespace scimesh
