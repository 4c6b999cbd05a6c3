// scimesh-alloc's state directory (private, locked) and the partition's node CPUs.
#include "launcher/alloc/alloc_state_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "launcher/allocation/command_output.h"

namespace scimesh::alloc {
namespace {

Status Private(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return Status(Code::kIo, dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return Status(Code::kInvalidArgument, dir + " is not a directory");
  if (st.st_uid != ::geteuid()) return Status(Code::kPermissionDenied, dir + " belongs to another user");
  if ((st.st_mode & 077) != 0) {
    return Status(Code::kPermissionDenied, dir + " is open to group or others (chmod 700 it)");
  }
  return Status::Ok();
}

}  // namespace

Status MakeStateDir(const std::string& dir) {
  std::error_code ec;
  const auto old = ::umask(077);
  std::filesystem::create_directories(dir + "/jobs", ec);
  ::umask(old);
  if (ec) return Status(Code::kIo, "cannot create the state directory " + dir + ": " + ec.message());
  if (Status s = Private(dir); !s.ok()) return s;
  return Private(dir + "/jobs");
}

namespace {

// Holds `path` (flock) for the process's life and writes its pid there;
// kConflict "another scimesh-alloc (pid N) WHAT" when one holds it.
Status HoldLock(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status(Code::kIo, "cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
    ::close(fd);
    std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "?";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return Status(Code::kConflict, "another scimesh-alloc (pid " + holder + ") " + what);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return Status(Code::kIo, "cannot write " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();  // fd stays open (and locked) until exit
}

}  // namespace

Status LockStateDir(const std::string& dir) {
  return HoldLock(dir + "/lock", "uses " + dir + ": one instance per name at a time");
}

Status LockWorkflows(const std::vector<std::string>& workflows, const std::string& locks_dir) {
  std::error_code ec;
  const auto old = ::umask(077);
  std::filesystem::create_directories(locks_dir, ec);
  ::umask(old);
  if (ec) return Status(Code::kIo, "cannot create " + locks_dir + ": " + ec.message());
  if (Status s = Private(locks_dir); !s.ok()) return s;
  for (const auto& w : workflows) {
    if (Status s = HoldLock(locks_dir + "/alloc-" + w, "serves workflow " + w + ": one instance per workflow");
        !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

bool StateDirLocked(const std::string& dir) {
  const int fd = ::open((dir + "/lock").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

Result<long long> PartitionNodeCpus(const std::string& partition) {
  std::vector<std::string> argv{"sinfo", "-h", "-o", "%c"};
  if (!partition.empty()) argv.push_back("--partition=" + partition);
  auto out = launcher::CommandOutput(argv, std::chrono::seconds(30));
  if (!out.ok()) return Status(Code::kUnavailable, "sinfo: " + out.status().message());
  long long fewest = 0;
  std::istringstream lines(*out);
  for (std::string line; std::getline(lines, line);) {
    const long long cpus = std::atoll(line.c_str());  // "2" or "2+" (nodes differ)
    if (cpus > 0 && (fewest == 0 || cpus < fewest)) fewest = cpus;
  }
  if (fewest == 0) {
    return Status(Code::kUnavailable, "sinfo lists no node" + (partition.empty() ? "" : " in partition " + partition));
  }
  return fewest;
}

}  // namespace scimesh::alloc
