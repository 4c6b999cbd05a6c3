// ArtifactStore: content-addressed artifact files under <dir>/<aa>/<sha256>.
// Bytes stream into a temporary file while SHA-256 is computed; only a file
// whose digest matches the declared one is fsynced and renamed into place,
// so a stored artifact is always complete and correct.
// Thread-safe: distinct Incoming uploads are independent; Commit of equal
// content from two uploads is safe (rename is atomic, the bytes are equal).
// A full store (past max_bytes, or the disk's ENOSPC/EDQUOT) is
// Code::kResourceExhausted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/sha256.h"
#include "protocol/util/status.h"

namespace scimesh::coordinator {

class ArtifactStore {
 public:
  // One artifact being received. Owns its temporary file and removes it
  // unless Commit() moved it into the store. Not thread-safe.
  class Incoming {
   public:
    ~Incoming();
    Incoming(const Incoming&) = delete;
    Incoming& operator=(const Incoming&) = delete;

    Status Append(const char* data, size_t size);
    int64_t size() const { return size_; }

   private:
    friend class ArtifactStore;
    Incoming(int fd, std::string temp_path) : fd_(fd), temp_path_(std::move(temp_path)) {}
    int fd_;
    std::string temp_path_;
    int64_t size_ = 0;
    Sha256 hash_;
    bool committed_ = false;
  };

  // Opens (creating, mode 0700) `dir` and `dir/tmp`; removes temporaries a
  // crash left behind. `max_bytes` caps the stored bytes (0: only the disk
  // does; they are then not counted).
  static Result<std::unique_ptr<ArtifactStore>> Open(const std::string& dir, int64_t max_bytes = 0);

  // Whether `more` bytes still fit under max_bytes. Checked per upload, so
  // uploads running at once may together pass the cap by their sizes.
  bool Fits(int64_t more) const { return max_bytes_ <= 0 || stored_.load() + more <= max_bytes_; }

  Result<std::unique_ptr<Incoming>> Begin();

  // Finishes `in`: when its SHA-256 equals `expected_sha256` the bytes are
  // made durable under PathOf(sha256). A mismatch is Code::kDataLoss whose
  // message names the computed digest; the temporary is then removed.
  Status Commit(Incoming& in, std::string_view expected_sha256);

  std::string PathOf(std::string_view sha256) const;

  // Every stored digest whose file was last written before `before` (a
  // Commit of equal content rewrites the time).
  std::vector<std::string> DigestsOlderThan(std::chrono::system_clock::time_point before) const;
  // Removes the file of `sha256` unless it was written at `before` or later
  // (serialized with Commit, so a file an upload is committing is kept).
  // The bytes freed (0 when kept or absent).
  int64_t RemoveIfOlderThan(std::string_view sha256, std::chrono::system_clock::time_point before);

 private:
  ArtifactStore(std::string dir, int64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  std::string dir_;
  const int64_t max_bytes_;
  std::atomic<int64_t> stored_{0};  // the stored bytes; meaningful only with a cap (walked at Open)
  std::mutex place_;  // a Commit's rename and a removal, one at a time
};

}  // namespace scimesh::coordinator
