// Content-addressed artifact files: temp + hash while streaming, fsync, rename.
#include "coordinator/artifact_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "coordinator/id_generator.h"

namespace scimesh::coordinator {
namespace {

Status Errno(std::string_view what) {
  // Only the operation and the error: never a full local path in messages.
  const std::string m = std::string(what) + ": " + std::strerror(errno);
  if (errno == ENOSPC || errno == EDQUOT) return Status::ResourceExhausted("the artifact store is full (" + m + ")");
  return Status::Io(m);
}

bool IsDigestName(const char* name) {
  if (std::strlen(name) != 64) return false;
  for (const char* c = name; *c != '\0'; ++c) {
    if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))) return false;
  }
  return true;
}

// Calls `each(sha256, stat)` for every stored file under `dir`.
template <typename F>
void ForEachStored(const std::string& dir, F each) {
  DIR* top = ::opendir(dir.c_str());
  if (top == nullptr) return;
  while (dirent* e = ::readdir(top)) {
    if (std::strlen(e->d_name) != 2 || e->d_name[0] == '.') continue;
    const std::string sub = dir + "/" + e->d_name;
    DIR* d = ::opendir(sub.c_str());
    if (d == nullptr) continue;
    while (dirent* f = ::readdir(d)) {
      struct stat st {};
      if (!IsDigestName(f->d_name) || ::fstatat(::dirfd(d), f->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISREG(st.st_mode)) each(std::string(f->d_name), st);
    }
    ::closedir(d);
  }
  ::closedir(top);
}

std::chrono::system_clock::time_point ModifiedAt(const struct stat& st) {
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
}

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return Status::Ok();
  return Errno("create artifact directory");
}

Status SyncDir(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open artifact directory");
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("fsync artifact directory");
  return Status::Ok();
}

}  // namespace

ArtifactStore::Incoming::~Incoming() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

Status ArtifactStore::Incoming::Append(const char* data, size_t size) {
  hash_.Update(data, size);
  size_ += static_cast<int64_t>(size);
  while (size > 0) {
    ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write artifact");
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::unique_ptr<ArtifactStore>> ArtifactStore::Open(const std::string& dir, int64_t max_bytes) {
  SCIMESH_RETURN_IF_ERROR(MakeDir(dir));
  SCIMESH_RETURN_IF_ERROR(MakeDir(dir + "/tmp"));
  if (DIR* d = ::opendir((dir + "/tmp").c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      ::unlink((dir + "/tmp/" + e->d_name).c_str());
    }
    ::closedir(d);
  }
  std::unique_ptr<ArtifactStore> store(new ArtifactStore(dir, max_bytes));
  if (max_bytes > 0) {  // a walk of the whole store, for the cap alone
    int64_t stored = 0;
    ForEachStored(dir, [&](const std::string&, const struct stat& st) { stored += st.st_size; });
    store->stored_ = stored;
  }
  return store;
}

Result<std::unique_ptr<ArtifactStore::Incoming>> ArtifactStore::Begin() {
  std::string path = dir_ + "/tmp/upload-" + RandomHex(8);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("create artifact temporary");
  return std::unique_ptr<Incoming>(new Incoming(fd, std::move(path)));
}

Status ArtifactStore::Commit(Incoming& in, std::string_view expected_sha256) {
  const std::string actual = in.hash_.HexDigest();
  if (actual != expected_sha256) return Status::DataLoss("the bytes have sha256 " + actual);
  if (::fsync(in.fd_) != 0) return Errno("fsync artifact");
  ::close(in.fd_);
  in.fd_ = -1;
  const std::string subdir = dir_ + "/" + actual.substr(0, 2);
  SCIMESH_RETURN_IF_ERROR(MakeDir(subdir));
  {
    // With a removal of the same digest one at a time: the file stays, or is
    // put back; its time is now, so a removal with an older bound keeps it.
    std::lock_guard<std::mutex> lock(place_);
    struct stat st {};
    const bool existed = ::stat(PathOf(actual).c_str(), &st) == 0;
    if (::rename(in.temp_path_.c_str(), PathOf(actual).c_str()) != 0) return Errno("store artifact");
    if (!existed) stored_ += in.size_;
  }
  in.committed_ = true;
  SCIMESH_RETURN_IF_ERROR(SyncDir(subdir));
  return SyncDir(dir_);
}

std::string ArtifactStore::PathOf(std::string_view sha256) const {
  return dir_ + "/" + std::string(sha256.substr(0, 2)) + "/" + std::string(sha256);
}

std::vector<std::string> ArtifactStore::DigestsOlderThan(std::chrono::system_clock::time_point before) const {
  std::vector<std::string> out;
  ForEachStored(dir_, [&](const std::string& sha256, const struct stat& st) {
    if (ModifiedAt(st) < before) out.push_back(sha256);
  });
  return out;
}

int64_t ArtifactStore::RemoveIfOlderThan(std::string_view sha256, std::chrono::system_clock::time_point before) {
  std::lock_guard<std::mutex> lock(place_);
  const std::string path = PathOf(sha256);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || ModifiedAt(st) >= before) return 0;
  if (::unlink(path.c_str()) != 0) return 0;
  stored_ -= st.st_size;
  return st.st_size;
}

}  // namespace scimesh::coordinator
