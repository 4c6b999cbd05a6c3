// Exact reading of JSON numbers (integers with from_chars, doubles with
// from_chars, correctly rounded).
#include "protocol/util/json_number.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace scimesh {

const char* ReadJsonNumber(std::string_view text, JsonNumber& out) {
  const char* s = text.data();
  const char* end = s + text.size();
  if (std::find_if(s, end, [](char c) { return c == '.' || c == 'e' || c == 'E'; }) == end) {
    if (!text.empty() && *s == '-') {
      auto [at, ec] = std::from_chars(s, end, out.i);
      if (ec == std::errc() && at == end) {
        out.kind = JsonNumber::kInt64;
        return nullptr;
      }
    } else {
      auto [at, ec] = std::from_chars(s, end, out.u);
      if (ec == std::errc() && at == end) {
        out.kind = JsonNumber::kUint64;
        return nullptr;
      }
    }
    // Past 64 bits: a double, as RapidJSON makes it.
  }
  out.kind = JsonNumber::kDouble;
  auto [at, ec] = std::from_chars(s, end, out.d);
  if (ec == std::errc::result_out_of_range) {
    // strtod tells overflow (infinity) from underflow (towards zero); the
    // text is ASCII digits, so the locale plays no part.
    out.d = std::strtod(std::string(text).c_str(), nullptr);
    if (std::isinf(out.d)) return "a number is too large";
    return nullptr;
  }
  if (ec != std::errc() || at != end) return "a number cannot be read";
  return nullptr;
}

}  // namespace scimesh
