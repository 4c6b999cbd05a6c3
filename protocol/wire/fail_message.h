// What a message may carry to the coordinator (fail messages, and anything
// else a worker reports): no stack trace, no full local path, no secret.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace scimesh {

// docs/protocol.md: error.message is at most 4 KiB.
inline constexpr size_t kMaxFailMessageBytes = 4096;

// The first line of `message` (a stack trace starts on the next one), with
// absolute and home-relative paths cut to their last component, secrets
// redacted, invalid UTF-8 replaced by '?', and cut to 4 KiB on a character
// boundary. Never empty.
std::string SanitizeFailMessage(std::string_view message);

// "/home/u/run/out.vti: not found" → "out.vti: not found"; URLs other than
// file:// are kept.
std::string StripDirectories(std::string_view text);

}  // namespace scimesh
