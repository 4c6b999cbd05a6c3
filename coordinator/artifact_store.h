// ArtifactStore: content-addressed artifact files under <dir>/<aa>/<sha256>.
// Bytes stream into a temporary file while SHA-256 is computed; only a file
// whose digest matches the declared one is fsynced and renamed into place,
// so a stored artifact is always complete and correct.
// Thread-safe: distinct Incoming uploads are independent; Commit of equal
// content from two uploads is safe (rename is atomic, the bytes are equal).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/sha256.h"
#include "protocol/status.h"

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
  // crash left behind.
  static Result<std::unique_ptr<ArtifactStore>> Open(const std::string& dir);

  Result<std::unique_ptr<Incoming>> Begin();

  // Finishes `in`: when its SHA-256 equals `expected_sha256` the bytes are
  // made durable under PathOf(sha256). A mismatch is Code::kDataLoss whose
  // message names the computed digest; the temporary is then removed.
  Status Commit(Incoming& in, std::string_view expected_sha256);

  std::string PathOf(std::string_view sha256) const;

 private:
  explicit ArtifactStore(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace scimesh::coordinator
