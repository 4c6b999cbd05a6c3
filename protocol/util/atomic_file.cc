// Atomic file writes: temporary file + (fsync) + rename, never through a symlink.
#include "protocol/util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

#include "protocol/util/unique_fd.h"

namespace scimesh {
namespace {

// How a written temporary file takes `name`'s place: rename() over it, or
// link() to it, which fails with EEXIST when `name` exists (a symlink there
// included: link() never follows one).
enum class Publish { kReplace, kCreate };

// Creates a temporary file beside `name`, lets `fill` write it, then
// publishes it as `name`; removes the temporary file on any failure, and after
// a link(). kAlreadyExists when `publish` is kCreate and `name` exists.
Status WriteBeside(int dir_fd, const std::string& name, mode_t mode, Durability durability, Publish publish,
                   const std::function<Status(int fd)>& fill) {
  static std::atomic<unsigned> counter{0};
  const auto slash = name.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : name.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  // A dot name in the same directory, so rename() stays on one filesystem.
  // Another host sharing the directory may use the same pid: take the next.
  std::string temp;
  UniqueFd fd;
  for (int tries = 0; tries < 8 && !fd.valid(); ++tries) {
    temp = dir + "." + base + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
    fd = UniqueFd(::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd.valid() && errno != EEXIST) break;
  }
  if (!fd.valid()) return Status::Io("cannot create a temporary file for " + base + ": " + std::strerror(errno));
  Status s = fill(fd.get()).WithContext("writing " + base);
  // fchmod: the umask must not widen or narrow what the caller asked for.
  if (s.ok()) ::fchmod(fd.get(), mode);
  if (s.ok() && durability == Durability::kDurable && ::fsync(fd.get()) != 0) {
    s = Status::Io("fsync of " + base + " failed: " + std::strerror(errno));
  }
  if (s.ok() && ::close(fd.Release()) != 0) s = Status::Io("closing " + base + " failed");
  if (s.ok() && publish == Publish::kReplace && ::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0) {
    s = Status::Io("renaming into " + base + " failed: " + std::strerror(errno));
  }
  if (s.ok() && publish == Publish::kCreate && ::linkat(dir_fd, temp.c_str(), dir_fd, name.c_str(), 0) != 0) {
    s = errno == EEXIST ? Status::AlreadyExists(base + " exists already")
                        : Status::Io("linking " + base + " failed: " + std::strerror(errno));
  }
  if (!s.ok() || publish == Publish::kCreate) ::unlinkat(dir_fd, temp.c_str(), 0);
  return s;
}

}  // namespace

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Io(std::string("write failed: ") + std::strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status WriteFileAtomically(int dir_fd, const std::string& name, std::string_view content, mode_t mode,
                           Durability durability) {
  return WriteBeside(dir_fd, name, mode, durability, Publish::kReplace,
                     [content](int fd) { return WriteAll(fd, content); });
}

Status CreateFileExclusively(int dir_fd, const std::string& name, std::string_view content, mode_t mode,
                             Durability durability) {
  return WriteBeside(dir_fd, name, mode, durability, Publish::kCreate,
                     [content](int fd) { return WriteAll(fd, content); });
}

Status WriteFileAtomically(const std::string& path, std::string_view content, mode_t mode, Durability durability) {
  return WriteFileAtomically(AT_FDCWD, path, content, mode, durability);
}

Status CopyFileAtomically(const std::string& source, const std::string& dest, mode_t mode, Durability durability) {
  UniqueFd in(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return Status::NotFound(std::string("cannot open the source file: ") + std::strerror(errno));
  return WriteBeside(AT_FDCWD, dest, mode, durability, Publish::kReplace, [&in](int out) {
    std::vector<char> buf(1 << 20);
    for (;;) {
      const ssize_t n = ::read(in.get(), buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::Io(std::string("read failed: ") + std::strerror(errno));
      if (n == 0) return Status::Ok();
      SCIMESH_RETURN_IF_ERROR(WriteAll(out, std::string_view(buf.data(), static_cast<size_t>(n))));
    }
  });
}

}  // namespace scimesh
