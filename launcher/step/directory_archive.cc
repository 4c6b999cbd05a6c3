// A small ustar writer and a checking reader, for directory artifacts.
#include "launcher/step/directory_archive.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/atomic_file.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::launcher {
namespace {

constexpr size_t kBlock = 512;
using Block = std::array<char, kBlock>;

Status Refuse(const std::string& entry, const std::string& why) {
  return Status::InvalidArgument("'" + entry + "': " + why);
}

bool ReadBlockAt(int fd, uint64_t offset, Block& b) {
  return ::pread(fd, b.data(), kBlock, static_cast<off_t>(offset)) == static_cast<ssize_t>(kBlock);
}

// `width` - 1 zero-padded octal digits, then NUL.
void Octal(char* field, size_t width, uint64_t value) {
  field[width - 1] = '\0';
  for (size_t i = width - 1; i-- > 0; value >>= 3) field[i] = static_cast<char>('0' + (value & 7));
}

unsigned Checksum(const Block& b) {
  unsigned sum = 0;
  for (size_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(b[i]);
  return sum;
}

Status Header(const std::string& path, char type, uint64_t size, Block& b) {
  b.fill(0);
  std::string_view name = path, prefix;
  if (path.size() > 100) {  // ustar: prefix (155) + '/' + name (100)
    size_t cut = path.rfind('/', 155);
    if (cut == std::string::npos || path.size() - cut - 1 > 100 || cut == 0) return Refuse(path, "name too long");
    prefix = std::string_view(path).substr(0, cut);
    name = std::string_view(path).substr(cut + 1);
  }
  std::memcpy(b.data(), name.data(), name.size());
  Octal(&b[100], 8, type == '5' ? 0755 : 0644);
  Octal(&b[108], 8, 0);
  Octal(&b[116], 8, 0);
  Octal(&b[124], 12, size);
  Octal(&b[136], 12, 0);
  b[156] = type;
  std::memcpy(&b[257], "ustar", 6);
  std::memcpy(&b[263], "00", 2);
  if (!prefix.empty()) std::memcpy(&b[345], prefix.data(), prefix.size());  // data() may be null
  Octal(&b[148], 7, Checksum(b));
  return Status::Ok();
}

struct Packer {
  int out;
  const ArchiveLimits& limits;
  uint64_t bytes = 0;
  size_t entries = 0;

  Status Entry(const std::string& path) {
    if (++entries > limits.max_entries) return Refuse(path, "more than " + std::to_string(limits.max_entries) + " entries");
    return Status::Ok();
  }

  Status CopyFile(int dir_fd, const std::string& name, const std::string& path) {
    UniqueFd f(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (!f.valid() || ::fstat(f.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Refuse(path, "cannot be read as a regular file");
    const auto size = static_cast<uint64_t>(st.st_size);
    if ((bytes += size) > limits.max_bytes) return Refuse(path, "the directory is over " + std::to_string(limits.max_bytes) + " bytes");
    Block b;
    SCIMESH_RETURN_IF_ERROR(Header(path, '0', size, b));
    SCIMESH_RETURN_IF_ERROR(WriteAll(out, std::string_view(b.data(), kBlock)));
    std::vector<char> buf(1 << 16);
    uint64_t left = size;
    while (left > 0) {
      const ssize_t r = ::read(f.get(), buf.data(), std::min<uint64_t>(buf.size(), left));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return Refuse(path, "changed size while it was packed");
      SCIMESH_RETURN_IF_ERROR(WriteAll(out, std::string_view(buf.data(), static_cast<size_t>(r))));
      left -= static_cast<uint64_t>(r);
    }
    b.fill(0);
    return WriteAll(out, std::string_view(b.data(), (kBlock - size % kBlock) % kBlock));
  }

  Status Walk(int dir_fd, const std::string& prefix) {
    DIR* d = ::fdopendir(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
    if (d == nullptr) return Status::Io("cannot list '" + prefix + "'");
    ::rewinddir(d);  // the duplicate shares its offset with dir_fd
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      const std::string path = prefix + name;
      SCIMESH_RETURN_IF_ERROR(Entry(path));
      struct stat st {};
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Refuse(path, "vanished");
      if (S_ISREG(st.st_mode)) {
        SCIMESH_RETURN_IF_ERROR(CopyFile(dir_fd, name, path));
      } else if (S_ISDIR(st.st_mode)) {
        Block b;
        SCIMESH_RETURN_IF_ERROR(Header(path + "/", '5', 0, b));
        SCIMESH_RETURN_IF_ERROR(WriteAll(out, std::string_view(b.data(), kBlock)));
        UniqueFd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub.valid()) return Refuse(path, "cannot be opened as a directory");
        SCIMESH_RETURN_IF_ERROR(Walk(sub.get(), path + "/"));
      } else {
        return Refuse(path, S_ISLNK(st.st_mode) ? "a symbolic link (only files and directories are packed)"
                                                : "not a regular file or directory (a device, FIFO or socket)");
      }
    }
    return Status::Ok();
  }
};

// One checked header: its path's components, its kind and size.
struct Entry {
  std::vector<std::string> parts;
  bool directory = false;
  uint64_t size = 0;
  uint64_t data_offset = 0;
};

std::string Field(const Block& b, size_t at, size_t width) {
  const char* s = &b[at];
  return std::string(s, strnlen(s, width));
}

Result<Entry> ReadHeader(const Block& b, uint64_t offset, uint64_t archive_size) {
  const std::string prefix = Field(b, 345, 155), name = Field(b, 0, 100);
  std::string path = prefix.empty() ? name : prefix + "/" + name;
  const std::string shown = path.empty() ? "(no name)" : path;
  const std::string chk = Field(b, 148, 8), size_text = Field(b, 124, 12);
  char* end = nullptr;
  if (std::memcmp(&b[257], "ustar", 5) != 0 || std::strtoul(chk.c_str(), &end, 8) != Checksum(b)) {
    return Refuse(shown, "not a valid ustar header (bad magic or checksum)");
  }
  Entry e;
  const char type = b[156];
  if (type == '5') e.directory = true;
  else if (type == '1') return Refuse(shown, "a hard link");
  else if (type == '2') return Refuse(shown, "a symbolic link");
  else if (type == '3' || type == '4') return Refuse(shown, "a device");
  else if (type == '6') return Refuse(shown, "a FIFO");
  else if (type != '0' && type != '\0') return Refuse(shown, std::string("an unsupported entry type '") + type + "'");
  if (size_text.find_first_not_of("01234567 ") != std::string::npos) return Refuse(shown, "a malformed size");
  e.size = std::strtoull(size_text.c_str(), nullptr, 8);
  e.data_offset = offset + kBlock;
  if (e.directory && e.size != 0) return Refuse(shown, "a directory with contents");
  if (e.size > archive_size - std::min(archive_size, e.data_offset)) return Refuse(shown, "larger than the archive holds");
  if (!path.empty() && path.back() == '/') path.pop_back();
  if (path.empty() || path.front() == '/') return Refuse(shown, "an absolute or empty path");
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    std::string part = path.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return Refuse(shown, "a path with an empty, '.' or '..' component");
    e.parts.push_back(std::move(part));
    start = slash + 1;
  }
  return e;
}

// Opens (creating when absent) the directories `parts[0..n)` under `root`.
Result<UniqueFd> OpenParents(int root, const std::vector<std::string>& parts, size_t n, const std::string& shown) {
  UniqueFd cur(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  for (size_t i = 0; i < n; ++i) {
    if (::mkdirat(cur.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST) return Refuse(shown, "cannot create its directory");
    UniqueFd next(::openat(cur.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return Refuse(shown, "its directory is not a directory");
    cur = std::move(next);
  }
  return cur;
}

Status Extract(int archive_fd, int dest_fd, const Entry& e) {
  std::string shown;
  for (const auto& p : e.parts) shown += (shown.empty() ? "" : "/") + p;
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd parent, OpenParents(dest_fd, e.parts, e.parts.size() - 1, shown));
  if (e.directory) return OpenParents(parent.get(), {e.parts.back()}, 1, shown).status();
  UniqueFd f(::openat(parent.get(), e.parts.back().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!f.valid()) return Refuse(shown, std::string("cannot be created: ") + std::strerror(errno));
  std::vector<char> buf(1 << 16);
  for (uint64_t done = 0; done < e.size;) {
    const ssize_t r = ::pread(archive_fd, buf.data(), std::min<uint64_t>(buf.size(), e.size - done),
                              static_cast<off_t>(e.data_offset + done));
    if (r <= 0) return Refuse(shown, "cannot be read from the archive");
    SCIMESH_RETURN_IF_ERROR(WriteAll(f.get(), std::string_view(buf.data(), static_cast<size_t>(r))));
    done += static_cast<uint64_t>(r);
  }
  return Status::Ok();
}

}  // namespace

Status PackDirectory(int dir_fd, int out_fd, const ArchiveLimits& limits) {
  Packer p{out_fd, limits};
  SCIMESH_RETURN_IF_ERROR(p.Walk(dir_fd, ""));
  const std::vector<char> end(2 * kBlock, 0);
  return WriteAll(out_fd, std::string_view(end.data(), end.size()));
}

Status UnpackArchive(int archive_fd, int dest_fd, const ArchiveLimits& limits) {
  struct stat st {};
  if (::fstat(archive_fd, &st) != 0 || !S_ISREG(st.st_mode)) return Status::InvalidArgument("the archive is not a regular file");
  const auto archive_size = static_cast<uint64_t>(st.st_size);
  std::vector<Entry> entries;
  uint64_t bytes = 0;
  uint64_t offset = 0;
  Block b;
  bool ended = false;
  while (ReadBlockAt(archive_fd, offset, b)) {
    if (std::all_of(b.begin(), b.end(), [](char c) { return c == 0; })) {
      ended = true;
      break;
    }
    SCIMESH_ASSIGN_OR_RETURN(Entry e, ReadHeader(b, offset, archive_size));
    if (entries.size() + 1 > limits.max_entries) {
      return Status::InvalidArgument("more than " + std::to_string(limits.max_entries) + " entries");
    }
    if ((bytes += e.size) > limits.max_bytes) {
      return Status::InvalidArgument("more than " + std::to_string(limits.max_bytes) + " bytes unpacked");
    }
    offset = e.data_offset + (e.size + kBlock - 1) / kBlock * kBlock;
    entries.push_back(std::move(e));
  }
  if (!ended) return Status::InvalidArgument("the archive is truncated (no end-of-archive block)");
  for (const auto& e : entries) SCIMESH_RETURN_IF_ERROR(Extract(archive_fd, dest_fd, e));
  return Status::Ok();
}

}  // namespace scimesh::launcher
