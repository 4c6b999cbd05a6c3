// The safe reader of attempt-directory files, and private directories.
#include "protocol/attempt/attempt_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "protocol/util/json_io.h"

namespace scimesh {
namespace {

// The name a message may carry: the last component only, never a full path.
std::string Shown(std::string_view name) {
  const auto slash = name.rfind('/');
  return std::string(slash == std::string_view::npos ? name : name.substr(slash + 1));
}

Status OpenError(std::string_view name, int err) {
  const std::string what = Shown(name);
  switch (err) {
    case ENOENT: return Status::NotFound(what + ": does not exist");
    case ELOOP: return Status::PermissionDenied(what + ": is a symbolic link (refused)");
    case EACCES:
    case EPERM: return Status::PermissionDenied(what + ": permission denied");
    default: return Status::Io(what + ": " + std::strerror(err));
  }
}

// How messages name the file: its role when given, else its last component.
std::string ShownAs(std::string_view name, const ReadRules& rules) {
  return rules.role.empty() ? Shown(name) : std::string(rules.role);
}

// Opens and checks everything but the size; messages name the file `shown`.
Result<UniqueFd> OpenChecked(int dir_fd, std::string_view name, const std::string& shown, uid_t owner,
                             const ReadRules& rules, struct stat* st) {
  const std::string n(name);
  UniqueFd fd(::openat(dir_fd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return OpenError(shown, errno);
  if (::fstat(fd.get(), st) != 0) return OpenError(shown, errno);
  if (!S_ISREG(st->st_mode)) return Status::InvalidArgument(shown + ": not a regular file (refused)");
  if (st->st_uid != owner) {
    return Status::PermissionDenied(shown + ": owned by uid " + std::to_string(st->st_uid) + ", not uid " +
                                    std::to_string(owner) + " (refused)");
  }
  if (rules.private_only && (st->st_mode & 077) != 0) {
    return Status::PermissionDenied(shown + ": readable by group or others (refused; chmod 600 it)");
  }
  return fd;
}

Status ReadAll(int fd, std::string_view name, size_t max_bytes, std::string* out) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OpenError(name, errno);
    if (n == 0) return Status::Ok();
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > max_bytes) {
      return Status::InvalidArgument(Shown(name) + ": larger than " + std::to_string(max_bytes) + " bytes (refused)");
    }
  }
}

}  // namespace

Result<std::string> ReadAttemptFile(int dir_fd, std::string_view name, uid_t owner, size_t max_bytes) {
  return ReadAttemptFile(dir_fd, name, owner, max_bytes, ReadRules{});
}

Result<std::string> ReadAttemptFile(int dir_fd, std::string_view name, uid_t owner, size_t max_bytes,
                                    const ReadRules& rules) {
  const std::string shown = ShownAs(name, rules);
  struct stat st {};
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd fd, OpenChecked(dir_fd, name, shown, owner, rules, &st));
  if (static_cast<size_t>(st.st_size) > max_bytes) {
    return Status::InvalidArgument(shown + ": larger than " + std::to_string(max_bytes) + " bytes (refused)");
  }
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  // The size is checked again while reading: the file may grow meanwhile.
  SCIMESH_RETURN_IF_ERROR(ReadAll(fd.get(), shown, max_bytes, &text));
  return text;
}

Result<std::string> ReadAttemptFileTail(int dir_fd, std::string_view name, uid_t owner, size_t max_bytes) {
  struct stat st {};
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd fd, OpenChecked(dir_fd, name, Shown(name), owner, ReadRules{}, &st));
  if (static_cast<size_t>(st.st_size) > max_bytes) {
    ::lseek(fd.get(), static_cast<off_t>(static_cast<size_t>(st.st_size) - max_bytes), SEEK_SET);
  }
  std::string text;
  Status s = ReadAll(fd.get(), name, max_bytes, &text);
  if (!s.ok() && s.code() != Code::kInvalidArgument) return s;
  if (text.size() > max_bytes) text.erase(0, text.size() - max_bytes);
  return text;
}

Result<rapidjson::Document> ReadAttemptJson(int dir_fd, std::string_view name, uid_t owner, size_t max_bytes) {
  SCIMESH_ASSIGN_OR_RETURN(std::string text, ReadAttemptFile(dir_fd, name, owner, max_bytes));
  return ParseJson(text, Shown(name));
}

Status CheckPrivateDirectory(int dir_fd, uid_t owner, std::string_view role) {
  struct stat st {};
  if (::fstat(dir_fd, &st) != 0) return Status::Io(std::string(role) + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(std::string(role) + " is not a directory");
  if (st.st_uid != owner) {
    return Status::PermissionDenied(std::string(role) + " belongs to uid " + std::to_string(st.st_uid) +
                                    ", not to uid " + std::to_string(owner) + " (refused)");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Status::PermissionDenied(std::string(role) + " is writable by group or others (refused; chmod 700 it)");
  }
  return Status::Ok();
}

Result<UniqueFd> OpenPrivateDirectory(const std::string& path, uid_t owner, std::string_view role) {
  const std::string named = std::string(role) + " " + path;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return Status::PermissionDenied(named + " is a symbolic link or not a directory (refused)");
    }
    return Status::Io("cannot open " + named + ": " + std::strerror(errno));
  }
  SCIMESH_RETURN_IF_ERROR(CheckPrivateDirectory(fd.get(), owner, named));
  return fd;
}

Result<UniqueFd> MakePrivateDirectory(const std::string& path, uid_t owner, std::string_view role) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path() && !p.parent_path().empty()) std::filesystem::create_directories(p.parent_path(), ec);
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Io("cannot create " + std::string(role) + " " + path + ": " + std::strerror(errno));
  }
  return OpenPrivateDirectory(path, owner, role);
}

}  // namespace scimesh
