// Retry timing: jittered exponential backoff and the Retry-After header.
//
// Pure functions: the random draw and the wall-clock "now" are parameters, so
// tests can pin them. Thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "protocol/util/clock.h"

namespace scimesh {

// docs/protocol.md "Client rules": base 200 ms, x2, +-50 % jitter, cap 10 s.
struct BackoffPolicy {
  Millis base{200};
  double multiplier = 2.0;
  double jitter = 0.5;  // fraction: the delay is scaled by 1 + jitter * (2u - 1)
  Millis cap{10000};
};

// The delay before retry number `retry` (1 = the first retry), with
// `unit` drawn uniformly from [0, 1). Never above policy.cap, never negative.
Millis BackoffDelay(const BackoffPolicy& policy, int retry, double unit);

// Retry-After (RFC 9110): delta-seconds ("3") or an HTTP-date
// ("Sun, 06 Nov 1994 08:49:37 GMT", compared with `now`; a past date is 0).
// nullopt when the value is neither.
std::optional<Millis> ParseRetryAfter(std::string_view value, std::chrono::system_clock::time_point now);

}  // namespace scimesh
