// The parts of a coordinator call that do not depend on how it is driven:
// the HTTP request (URL, headers, token, limits), what one try's answer means
// for the retry loop, and the typed reply. Client drives them one call at a
// time; HeartbeatHub drives many heartbeats at once on one multi handle.
//
// Pure functions of their arguments (logging aside); thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/client/client.h"

namespace scimesh {

// Trims trailing slashes off the coordinator URL and checks it against the
// transport policy (https, or http to loopback unless allow_insecure_http).
Result<Url> CheckCoordinatorUrl(ClientOptions& options);
// The transport options every coordinator connection uses.
HttpSessionOptions SessionOptions(const ClientOptions& options);

// A call to `path` under the coordinator's /v1/api: JSON headers, the bearer
// token (a pointer into `options`, which must outlive the request), the
// response size limit. The caller sets the timeout of each try.
HttpRequest CoordinatorRequest(const ClientOptions& options, std::string method, const std::string& path,
                               std::string body);

// "heartbeat l_..." : how errors and logs name a lease call.
std::string LeaseCallName(std::string_view call, const LeaseCall& lease);

// POST /steps/{lease_id}/{call} ("started" or "heartbeat") with the beat body.
HttpRequest ExtendRequest(const ClientOptions& options, std::string_view call, const LeaseCall& lease,
                          const std::optional<std::string>& progress_json);
// That request's body: who calls, and the progress when there is one.
std::string ExtendBody(const LeaseCall& lease, const std::optional<std::string>& progress_json);

// What one try means to the retry loop ("Client rules"): either the call's
// result (an answer that is not 5xx/429, or an error that is not retryable,
// named with `what`), or a retryable failure and the wait before the next
// try (the backoff delay, or Retry-After when the server asks for longer).
struct TryVerdict {
  std::optional<Result<HttpResponse>> result;
  Status failure;  // when result is empty; names `what`
  Millis wait{0};
};
TryVerdict JudgeTry(std::string_view what, Result<HttpResponse> r, Millis backoff_delay);

// Whether two failed tries failed the same way: their codes and messages
// match once the time libcurl measured ("after 9 ms") is left out, so an
// outage is one warning however long each refused connect took.
bool SameFailure(const Status& a, const Status& b);

// The failure a retry loop returns when the next try would pass its budget.
Status GaveUp(const Status& failure, int tries);

// A 2xx answer parsed with `parse`; anything else an error naming `what`.
template <typename T>
Result<T> Expect2xx(std::string_view what, const Result<HttpResponse>& r, Result<T> (*parse)(std::string_view)) {
  if (!r.ok()) return r.status();  // the retry loop named `what` already
  if (r->status / 100 != 2) return StatusFromErrorResponse(what, *r);
  auto v = parse(r->body);
  if (!v.ok()) return v.status().WithContext(std::string(what) + ": unexpected response");
  return v;
}

// A lease call's answer: applied (2xx parsed with `parse`) or refused (409
// with one of the four reasons); anything else an error. Instantiated for
// ExtendResponse, CompleteResponse, FailResponse and ArtifactRef.
template <typename T>
Result<LeaseReply<T>> LeaseAnswer(std::string_view what, const Result<HttpResponse>& r,
                                  Result<T> (*parse)(std::string_view));

// The answer to started/heartbeat, with the local deadline it grants
// (measured from when the request was sent).
Result<LeaseReply<LeaseExtension>> ExtensionAnswer(std::string_view what, const Result<HttpResponse>& r);

}  // namespace scimesh
