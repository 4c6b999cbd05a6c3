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
  return Status::Io(std::string(what) + ": " + std::strerror(errno));
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

Result<std::unique_ptr<ArtifactStore>> ArtifactStore::Open(const std::string& dir) {
  SCIMESH_RETURN_IF_ERROR(MakeDir(dir));
  SCIMESH_RETURN_IF_ERROR(MakeDir(dir + "/tmp"));
  if (DIR* d = ::opendir((dir + "/tmp").c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      ::unlink((dir + "/tmp/" + e->d_name).c_str());
    }
    ::closedir(d);
  }
  return std::unique_ptr<ArtifactStore>(new ArtifactStore(dir));
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
  if (::rename(in.temp_path_.c_str(), PathOf(actual).c_str()) != 0) return Errno("store artifact");
  in.committed_ = true;
  SCIMESH_RETURN_IF_ERROR(SyncDir(subdir));
  return SyncDir(dir_);
}

std::string ArtifactStore::PathOf(std::string_view sha256) const {
  return dir_ + "/" + std::string(sha256.substr(0, 2)) + "/" + std::string(sha256);
}

}  // namespace scimesh::coordinator
