// Deciding whether a body produced a result.
#include "protocol/step_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/attempt_dir.h"
#include "protocol/json_io.h"
#include "protocol/unique_fd.h"

namespace scimesh {

Result<std::string> CheckStepOutput(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("the step produced no output (empty result)");
  }
  if (text.size() > kMaxOutputBytes) {
    return Status::InvalidArgument("the step's output is larger than " + std::to_string(kMaxOutputBytes) +
                                   " bytes");
  }
  auto doc = ParseJson(text, "output");
  if (!doc.ok()) return Status::InvalidArgument("the step's output is not valid JSON");
  if (!doc->IsObject()) return Status::InvalidArgument("the step's output is not a JSON object");
  return ToJsonText(*doc);
}

Result<std::string> ReadOutputFile(const AttemptDir& dir) {
  int fd = ::openat(dir.fd(), "output.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::InvalidArgument("the step wrote no output.json (empty result)");
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::InvalidArgument("output.json is not a regular file");
  }
  if (static_cast<size_t>(st.st_size) > kMaxOutputBytes) {
    return Status::InvalidArgument("output.json is larger than " + std::to_string(kMaxOutputBytes) + " bytes");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  if (n < 0) return Status::Io("reading output.json failed");
  text.resize(static_cast<size_t>(n));
  return CheckStepOutput(text);
}

}  // namespace scimesh
