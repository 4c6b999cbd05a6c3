// Identifier rules from docs/protocol.md "Conventions".
#include "protocol/wire/identifiers.h"

#include <string>

namespace scimesh {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

Status Refuse(std::string_view field, std::string_view rule) {
  return Status::InvalidField(std::string(field), std::string(rule));
}

Status CheckPrefixedHex(std::string_view value, std::string_view field, char prefix) {
  bool ok = value.size() == 18 && value[0] == prefix && value[1] == '_';
  for (size_t i = 2; ok && i < value.size(); ++i) ok = IsLowerHex(value[i]);
  if (ok) return Status::Ok();
  return Refuse(field, std::string("must be '") + prefix + "_' followed by 16 lowercase hex digits");
}

}  // namespace

Status CheckIdentifier(std::string_view value, std::string_view field) {
  if (value.empty() || value.size() > 64) return Refuse(field, "must be 1-64 characters");
  for (char c : value) {
    if (!IsNameChar(c)) return Refuse(field, "may only hold [A-Za-z0-9._-]");
  }
  if (value == "." || value == "..") return Refuse(field, "must not be '.' or '..'");
  return Status::Ok();
}

Status CheckArtifactName(std::string_view value, std::string_view field) {
  if (value.empty() || value.size() > 128) return Refuse(field, "must be 1-128 characters");
  for (char c : value) {
    if (!IsNameChar(c)) return Refuse(field, "may only hold [A-Za-z0-9._-]");
  }
  if (value[0] == '.') return Refuse(field, "must not start with '.'");
  return Status::Ok();
}

Status CheckWorkerId(std::string_view value, std::string_view field) {
  if (value.empty() || value.size() > 128) return Refuse(field, "must be 1-128 characters");
  for (char c : value) {
    if (!IsNameChar(c) && c != ':' && c != '@' && c != '/') {
      return Refuse(field, "may only hold [A-Za-z0-9._:@/-]");
    }
  }
  return Status::Ok();
}

Status CheckPrintableText(std::string_view value, std::string_view field) {
  for (char c : value) {
    if (c < 0x20 || c > 0x7e) return Refuse(field, "may only hold printable ASCII (no control characters)");
  }
  return Status::Ok();
}

Status CheckLeaseId(std::string_view value, std::string_view field) {
  return CheckPrefixedHex(value, field, 'l');
}

Status CheckRunId(std::string_view value, std::string_view field) {
  return CheckPrefixedHex(value, field, 'r');
}

Status CheckSha256(std::string_view value, std::string_view field) {
  bool ok = value.size() == 64;
  for (size_t i = 0; ok && i < value.size(); ++i) ok = IsLowerHex(value[i]);
  return ok ? Status::Ok() : Refuse(field, "must be 64 lowercase hex digits");
}

}  // namespace scimesh
