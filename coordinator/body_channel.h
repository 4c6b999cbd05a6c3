// BodyChannel: a streamed request body handed from the connection thread,
// which receives it, to the handler thread, which reads it (artifact
// uploads). Bounded: past kHighWater the connection thread pauses the
// connection until the handler has read below it. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

#include "coordinator/http_message.h"

namespace scimesh::coordinator {

class BodyChannel {
 public:
  static constexpr size_t kHighWater = 1 << 20;

  // `resume` is called (from the handler thread) when a paused connection
  // may receive again.
  explicit BodyChannel(std::function<void()> resume) : resume_(std::move(resume)) {}

  // Connection thread. Returns false when the buffer is past the high water
  // mark: pause the connection (Paused() then marks it) until resumed.
  // Bytes offered after the handler stopped reading are dropped.
  bool Offer(const char* data, size_t size);
  void MarkPaused();
  // The body's end arrived, or the connection was lost first.
  void Finish(bool complete);

  // Handler thread: the ContentReader contract (http_message.h).
  bool Read(const BodyChunk& chunk);
  // The handler is done with the body, read or not.
  void Abandon();

 private:
  std::mutex mu_;
  std::condition_variable more_;
  std::string buffer_;
  bool finished_ = false;
  bool complete_ = false;
  bool abandoned_ = false;
  bool paused_ = false;
  std::function<void()> resume_;
};

}  // namespace scimesh::coordinator
