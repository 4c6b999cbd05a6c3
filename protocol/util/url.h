// URLs the client may talk to: parsing, origins, and the transport policy
// (https by default; plain http only to loopback unless explicitly allowed).
//
// Pure functions over values; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "protocol/util/status.h"

namespace scimesh {

struct Url {
  std::string text;    // as normalised by libcurl's URL parser
  std::string scheme;  // "http" or "https"
  std::string host;    // lowercase; IPv6 in brackets ("[::1]")
  int port = 0;        // explicit or the scheme's default
};

// Parses an absolute http(s) URL. Refuses other schemes and URLs carrying
// credentials ("user:pass@"), which would leak into logs and redirects.
Result<Url> ParseUrl(std::string_view text);

// Resolves `location` (a Location header) against `base`.
Result<Url> ResolveUrl(const Url& base, std::string_view location);

// Literal loopback: localhost, 127.0.0.0/8, [::1]. No DNS lookups.
bool IsLoopbackHost(std::string_view host);

// Same scheme, host and port: the only case where a bearer token may follow.
bool SameOrigin(const Url& a, const Url& b);

// OK for https; for http only when the host is loopback or `allow_insecure_http`.
Status CheckTransportPolicy(const Url& url, bool allow_insecure_http);

// Percent-encodes one path or query component.
std::string EscapeComponent(std::string_view text);

}  // namespace scimesh
