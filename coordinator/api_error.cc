// Named constructors of ApiError: one per row of docs/protocol.md "Errors".
#include "coordinator/api_error.h"

namespace scimesh::coordinator {
namespace {

ApiError Make(int status, const char* error, std::string message) {
  ApiError e;
  e.http_status = status;
  e.error = error;
  e.message = std::move(message);
  return e;
}

}  // namespace

ApiError ApiError::BadRequest(std::string field, std::string message) {
  ApiError e = Make(400, "bad_request", std::move(message));
  e.field = std::move(field);
  return e;
}

ApiError ApiError::ChecksumMismatch(std::string message) {
  return Make(400, "checksum_mismatch", std::move(message));
}

ApiError ApiError::Unauthorized(std::string message) {
  return Make(401, "unauthorized", std::move(message));
}

ApiError ApiError::Forbidden(std::string message) {
  return Make(403, "forbidden", std::move(message));
}

ApiError ApiError::NotOwner(std::string message) {
  return Make(403, "not_owner", std::move(message));
}

ApiError ApiError::NotFound(std::string message) {
  return Make(404, "not_found", std::move(message));
}

ApiError ApiError::Conflict(std::string reason, std::string message, std::string outcome) {
  ApiError e = Make(409, "conflict", std::move(message));
  e.reason = std::move(reason);
  e.outcome = std::move(outcome);
  return e;
}

ApiError ApiError::LengthRequired() {
  return Make(411, "length_required", "a request body needs Content-Length (or chunked transfer encoding)");
}

ApiError ApiError::TooLarge(std::string message) {
  return Make(413, "too_large", std::move(message));
}

ApiError ApiError::Unavailable(std::string message) {
  ApiError e = Make(503, "unavailable", std::move(message));
  e.retry_after_s = 1;
  return e;
}

ApiError ApiError::InsufficientStorage() {
  ApiError e = Make(507, "insufficient_storage", "the artifact store is full; nothing was kept");
  e.retry_after_s = 60;
  return e;
}

ApiError ApiError::FromStatus(const Status& status) {
  if (status.code() == Code::kUnavailable) return Unavailable("storage is busy; retry");
  if (status.code() == Code::kResourceExhausted) return InsufficientStorage();
  return Make(500, "internal", "the coordinator failed to apply the call; see its log");
}

}  // namespace scimesh::coordinator
