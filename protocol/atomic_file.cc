// Atomic small-file writes: temporary file + rename, never through a symlink.
#include "protocol/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace scimesh {

Status WriteFileAtomically(int dir_fd, const std::string& name, std::string_view content, mode_t mode) {
  static std::atomic<unsigned> counter{0};
  const auto slash = name.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : name.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  // A dot name in the same directory, so rename() stays on one filesystem.
  const std::string temp = dir + "." + base + ".tmp." + std::to_string(::getpid()) + "." +
                           std::to_string(counter.fetch_add(1));
  int fd = ::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return Status::Io("cannot create a temporary file for " + base + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlinkat(dir_fd, temp.c_str(), 0);
      return Status::Io("writing " + base + " failed: " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  // fchmod: the umask must not widen or narrow what the caller asked for.
  ::fchmod(fd, mode);
  if (::close(fd) != 0) {
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return Status::Io("closing " + base + " failed");
  }
  if (::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return Status::Io("renaming into " + base + " failed: " + std::strerror(err));
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::string_view content, mode_t mode) {
  return WriteFileAtomically(AT_FDCWD, path, content, mode);
}

}  // namespace scimesh
