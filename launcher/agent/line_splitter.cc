// Newline framing with a length bound.
#include "launcher/agent/line_splitter.h"

namespace scimesh::agent {

std::vector<LineSplitter::Line> LineSplitter::Push(std::string_view bytes) {
  std::vector<Line> lines;
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view part = bytes.substr(0, nl);
    if (dropping_) {
      // The rest of a line already reported as oversize.
    } else if (buffer_.size() + part.size() > max_line_) {
      buffer_.clear();
      dropping_ = true;
      lines.push_back({"", true});
    } else {
      buffer_.append(part);
    }
    if (nl == std::string_view::npos) break;
    if (!dropping_) lines.push_back({std::move(buffer_), false});
    buffer_.clear();
    dropping_ = false;
    bytes.remove_prefix(nl + 1);
  }
  return lines;
}

}  // namespace scimesh::agent
