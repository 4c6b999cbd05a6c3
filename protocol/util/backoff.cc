// Jittered exponential backoff and Retry-After parsing.
#include "protocol/util/backoff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <ctime>
#include <string>

namespace scimesh {

Millis BackoffDelay(const BackoffPolicy& policy, int retry, double unit) {
  if (retry < 1) retry = 1;
  const double cap = static_cast<double>(policy.cap.count());
  // Grow in floating point and clamp before jitter so large retry counts
  // cannot overflow.
  double raw = static_cast<double>(policy.base.count()) * std::pow(policy.multiplier, retry - 1);
  raw = std::min(raw, cap);
  double jittered = raw * (1.0 + policy.jitter * (2.0 * unit - 1.0));
  jittered = std::clamp(jittered, 0.0, cap);
  return Millis(static_cast<int64_t>(std::llround(jittered)));
}

namespace {

std::optional<int> Month(std::string_view m) {
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (m == kMonths[i]) return static_cast<int>(i);
  }
  return std::nullopt;
}

bool Digits(std::string_view s, int& out) {
  if (s.empty() || s.size() > 4) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

// IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (the only form senders may use),
// as seconds since the epoch (any year 0000-9999: not yet a time_point).
std::optional<time_t> ParseHttpDate(std::string_view v) {
  if (v.size() != 29 || v[3] != ',' || v[4] != ' ' || v[7] != ' ' || v[11] != ' ' || v[16] != ' ' ||
      v[19] != ':' || v[22] != ':' || v.substr(25) != " GMT") {
    return std::nullopt;
  }
  std::tm tm{};
  auto month = Month(v.substr(8, 3));
  int day, year, hour, minute, second;
  if (!month || !Digits(v.substr(5, 2), day) || !Digits(v.substr(12, 4), year) ||
      !Digits(v.substr(17, 2), hour) || !Digits(v.substr(20, 2), minute) ||
      !Digits(v.substr(23, 2), second)) {
    return std::nullopt;
  }
  tm.tm_mday = day;
  tm.tm_mon = *month;
  tm.tm_year = year - 1900;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  time_t t = timegm(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  return t;
}

}  // namespace

std::optional<Millis> ParseRetryAfter(std::string_view value, std::chrono::system_clock::time_point now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r')) {
    value.remove_suffix(1);
  }
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789") == std::string_view::npos) {
    // Saturate absurd values instead of overflowing; the caller's retry
    // budget decides whether to wait that long at all.
    if (value.size() > 9) return Millis(int64_t{999999999} * 1000);
    return Millis(std::stoll(std::string(value)) * 1000);
  }
  auto date = ParseHttpDate(value);
  if (!date) return std::nullopt;
  // The clock's time_point holds only ±292 years around 1970: settle dates
  // outside the next 999999999 s before converting (as delta-seconds saturate).
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  if (*date < now_s) return Millis(0);
  if (*date - now_s > 999999999) return Millis(int64_t{999999999} * 1000);
  auto when = std::chrono::system_clock::from_time_t(*date);
  if (when <= now) return Millis(0);
  return std::chrono::duration_cast<Millis>(when - now);
}

}  // namespace scimesh
