// The streamed body hand-over between the connection and handler threads.
#include "coordinator/body_channel.h"

namespace scimesh::coordinator {

bool BodyChannel::Offer(const char* data, size_t size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abandoned_) return true;
    buffer_.append(data, size);
  }
  more_.notify_all();
  std::lock_guard<std::mutex> lock(mu_);
  return buffer_.size() < kHighWater;
}

void BodyChannel::MarkPaused() {
  bool resume_now = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The handler may have drained (or left) between Offer and here.
    resume_now = abandoned_ || buffer_.size() < kHighWater;
    paused_ = !resume_now;
  }
  if (resume_now) resume_();
}

void BodyChannel::Finish(bool complete) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    complete_ = complete;
  }
  more_.notify_all();
}

bool BodyChannel::Read(const BodyChunk& chunk) {
  for (;;) {
    std::string piece;
    bool resume = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      more_.wait(lock, [this] { return !buffer_.empty() || finished_; });
      if (buffer_.empty()) return complete_;
      piece.swap(buffer_);
      resume = paused_;
      paused_ = false;
    }
    if (resume) resume_();
    if (!chunk(piece.data(), piece.size())) return false;
  }
}

void BodyChannel::Abandon() {
  bool resume = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_ = true;
    buffer_.clear();
    resume = paused_;
    paused_ = false;
  }
  if (resume) resume_();
}

}  // namespace scimesh::coordinator
