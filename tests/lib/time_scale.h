// Stretches the time windows of timing-bound tests in slow builds: a sanitizer
// build runs several times slower, so its test preset sets
// SCIMESH_TEST_TIME_SCALE (e.g. 4) and every window a test waits for, or
// makes a peer wait, is multiplied by it. The behaviour asserted is the same.
#pragma once

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <string_view>

namespace scimesh::testing {

// The factor from SCIMESH_TEST_TIME_SCALE: a whole number in [1, 50], else 1.
inline int TimeScale() {
  static const int scale = [] {
    const char* env = std::getenv("SCIMESH_TEST_TIME_SCALE");
    const std::string_view text = env != nullptr ? env : "";
    int n = 1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    return ec == std::errc() && end == text.data() + text.size() && n >= 1 && n <= 50 ? n : 1;
  }();
  return scale;
}

template <typename Rep, typename Period>
std::chrono::duration<Rep, Period> Scaled(std::chrono::duration<Rep, Period> d) {
  return d * TimeScale();
}

}  // namespace scimesh::testing
