// ApiError and ApiResult<T>: the answer the HTTP API gives instead of a result,
// exactly as docs/protocol.md "Errors" defines its body.
//
// Inside the coordinator, failures of the machinery (SQLite, files) travel as
// scimesh::Status; a refusal the protocol defines (400, 401, 403, 404, 409, 413)
// travels as an ApiError, which carries the extra fields those bodies need
// (`field`, `reason`, `outcome`). ApiError::FromStatus turns a Status into the
// 5xx a client may retry. Plain values: copyable, not thread-safe to mutate.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "protocol/util/status.h"

namespace scimesh::coordinator {

struct ApiError {
  int http_status = 500;
  std::string error;    // bad_request, checksum_mismatch, unauthorized, forbidden, ...
  std::string message;  // for a person; never a token, a path or a stack trace
  std::string field;    // 400: the offending field ("definitions[0].steps[1].needs"); else empty
  std::string reason;   // 409: already_applied | fenced | run_terminal | not_started
  std::string outcome;  // 409 already_applied: completed | failed
  int retry_after_s = 0;  // 429/503: the Retry-After header; 0 = none

  static ApiError BadRequest(std::string field, std::string message);
  static ApiError ChecksumMismatch(std::string message);
  static ApiError Unauthorized(std::string message);
  static ApiError Forbidden(std::string message);
  // 403 `not_owner`: the worker_id, workflow or run belongs to another key.
  static ApiError NotOwner(std::string message);
  static ApiError NotFound(std::string message);
  static ApiError Conflict(std::string reason, std::string message, std::string outcome = {});
  static ApiError TooLarge(std::string message);
  // 411: a body without Content-Length and not chunked.
  static ApiError LengthRequired();
  static ApiError Unavailable(std::string message);
  // 507 with Retry-After: the artifact store is full; nothing was kept.
  static ApiError InsufficientStorage();
  // A machinery failure: Code::kUnavailable (SQLite busy) -> 503 with
  // Retry-After; Code::kResourceExhausted (a full store) -> 507; anything
  // else -> 500 `internal`. The message is generic: the
  // cause goes to the log, not to the client.
  static ApiError FromStatus(const Status& status);
};

// Returned by calls whose success carries nothing.
struct Done {};

// A value of type T, or the ApiError that answers the request instead.
template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  ApiResult(ApiError error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  // Preconditions: ok() for value(), !ok() for error().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const ApiError& error() const { return std::get<ApiError>(v_); }

 private:
  std::variant<T, ApiError> v_;
};

}  // namespace scimesh::coordinator
