// Names and formatting for Status codes.
#include "protocol/util/status.h"

namespace scimesh {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kNotFound: return "not_found";
    case Code::kAlreadyExists: return "already_exists";
    case Code::kPermissionDenied: return "permission_denied";
    case Code::kConflict: return "conflict";
    case Code::kUnavailable: return "unavailable";
    case Code::kTimeout: return "timeout";
    case Code::kCancelled: return "cancelled";
    case Code::kIo: return "io";
    case Code::kDataLoss: return "data_loss";
    case Code::kInternal: return "internal";
    case Code::kResourceExhausted: return "resource_exhausted";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(CodeName(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

Status Status::InvalidField(std::string field, std::string why) {
  Status s(Code::kInvalidArgument, field.empty() ? why : field + ": " + why);
  s.field_ = std::move(field);
  s.why_ = std::move(why);
  return s;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string m(context);
  m += ": ";
  m += message_;
  Status s(code_, std::move(m));
  s.field_ = field_;
  s.why_ = why_;
  return s;
}

}  // namespace scimesh
