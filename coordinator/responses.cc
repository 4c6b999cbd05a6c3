// The error body as wire JSON: an ApiError becomes protocol/'s ErrorBody and
// is written by protocol/'s serializer, the code the client's parser is
// tested against.
#include "coordinator/responses.h"

#include "protocol/wire/wire_json.h"

namespace scimesh::coordinator {

std::string ToJson(const ApiError& e) {
  ErrorBody w;
  w.error = e.error;
  // A 400 always names its field (possibly "" for the body as a whole).
  if (!e.field.empty() || e.error == "bad_request") w.field = e.field;
  w.message = e.message;
  if (!e.reason.empty()) w.reason = e.reason;
  if (!e.outcome.empty()) w.outcome = e.outcome;
  return SerializeErrorBody(w);
}

}  // namespace scimesh::coordinator
