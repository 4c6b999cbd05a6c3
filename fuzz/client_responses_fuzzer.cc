// libFuzzer harness: every response parser of the client (protocol/) — the
// bodies a coordinator sends back — plus the URL and Retry-After parsers it
// applies to what a server says. Property besides not crashing: what parses
// serializes to text that parses again to the same serialization.
#include <chrono>
#include <string>

#include "fuzz/fuzz_input.h"
#include "protocol/util/backoff.h"
#include "protocol/util/url.h"
#include "protocol/wire/wire_json.h"

namespace {

using scimesh::Result;

template <typename T, typename Parse, typename Serialize>
void RoundTrip(std::string_view body, Parse parse, Serialize serialize) {
  Result<T> first = parse(body);
  if (!first.ok()) return;
  const std::string text = serialize(first.value());
  Result<T> second = parse(text);
  if (!second.ok() || serialize(second.value()) != text) scimesh::fuzz::PropertyBroken();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scimesh;
  auto [parser, body] = fuzz::SplitFuzzInput(data, size);
  if (parser == "register.response") {
    RoundTrip<RegisterResponse>(body, ParseRegisterResponse, SerializeRegisterResponse);
  } else if (parser == "claim.response") {
    RoundTrip<ClaimResponse>(body, ParseClaimResponse, SerializeClaimResponse);
  } else if (parser == "lease") {
    RoundTrip<Lease>(body, ParseLease, [](const Lease& l) { return SerializeLease(l); });
  } else if (parser == "extend.response") {
    RoundTrip<ExtendResponse>(body, ParseExtendResponse, SerializeExtendResponse);
  } else if (parser == "complete.response") {
    RoundTrip<CompleteResponse>(body, ParseCompleteResponse, SerializeCompleteResponse);
  } else if (parser == "fail.response") {
    RoundTrip<FailResponse>(body, ParseFailResponse, SerializeFailResponse);
  } else if (parser == "artifact.response") {
    RoundTrip<ArtifactRef>(body, ParseArtifactRef, SerializeArtifactRef);
  } else if (parser == "error") {
    RoundTrip<ErrorBody>(body, ParseErrorBody, SerializeErrorBody);
  } else if (parser == "run.status") {
    RoundTrip<RunStatus>(body, ParseRunStatus, SerializeRunStatus);
  } else if (parser == "run.show") {
    RoundTrip<RunView>(body, ParseRunView, SerializeRunView);
  } else if (parser == "run.journal") {
    RoundTrip<Journal>(body, ParseJournal, SerializeJournal);
  } else if (parser == "run.list") {
    RoundTrip<RunList>(body, ParseRunList, SerializeRunList);
  } else if (parser == "url") {
    auto base = ParseUrl("https://coordinator.example:8443/v1/api/");
    (void)ParseUrl(body);
    if (base.ok()) (void)ResolveUrl(base.value(), body);
  } else if (parser == "retry_after") {
    (void)ParseRetryAfter(body, std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000)));
  }
  return 0;
}
