// LineSplitter: cuts a byte stream into newline-terminated lines of bounded
// length (the agent's channel, both directions).
//
// A line longer than the limit is never buffered whole: it is reported once
// as oversize and the rest of it, up to its newline, is dropped. A value;
// not thread-safe (one owner).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace scimesh::agent {

// Longest line either side accepts (the newline excluded).
inline constexpr size_t kMaxLineBytes = 1 << 20;

class LineSplitter {
 public:
  struct Line {
    std::string text;       // without the newline; empty when oversize
    bool oversize = false;  // the line was longer than the limit and dropped
  };

  explicit LineSplitter(size_t max_line = kMaxLineBytes) : max_line_(max_line) {}

  // Appends `bytes`; returns the lines they complete, in order.
  std::vector<Line> Push(std::string_view bytes);

  // Bytes of an unfinished line are waiting for their newline.
  bool pending() const { return !buffer_.empty() || dropping_; }

 private:
  size_t max_line_;
  std::string buffer_;
  bool dropping_ = false;  // inside an oversize line, already reported
};

}  // namespace scimesh::agent
