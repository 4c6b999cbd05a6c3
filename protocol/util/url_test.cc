// URL parsing, origins and the transport policy.
#include "protocol/util/url.h"

#include <gtest/gtest.h>

namespace scimesh {
namespace {

TEST(Url, ParsesSchemeHostAndDefaultPorts) {
  auto a = ParseUrl("https://Coord.Example/v1");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->scheme, "https");
  EXPECT_EQ(a->host, "coord.example");
  EXPECT_EQ(a->port, 443);
  auto b = ParseUrl("http://127.0.0.1:8470");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->port, 8470);
  EXPECT_EQ(ParseUrl("http://[::1]:9/")->host, "[::1]");
}

TEST(Url, RefusesOtherSchemesAndCredentials) {
  EXPECT_FALSE(ParseUrl("file:///etc/passwd").ok());
  EXPECT_FALSE(ParseUrl("ftp://h/x").ok());
  EXPECT_FALSE(ParseUrl("http://user:secret@h/").ok());
  EXPECT_FALSE(ParseUrl("not a url").ok());
}

TEST(Url, OriginIsSchemeHostAndPort) {
  auto base = *ParseUrl("http://127.0.0.1:8470/v1/api");
  EXPECT_TRUE(SameOrigin(base, *ParseUrl("http://127.0.0.1:8470/other")));
  EXPECT_FALSE(SameOrigin(base, *ParseUrl("http://127.0.0.2:8470/")));
  EXPECT_FALSE(SameOrigin(base, *ParseUrl("http://127.0.0.1:8471/")));
  EXPECT_FALSE(SameOrigin(base, *ParseUrl("https://127.0.0.1:8470/")));
  EXPECT_TRUE(SameOrigin(*ParseUrl("https://h/"), *ParseUrl("https://H:443/x")));
}

TEST(Url, ResolvesRelativeRedirects) {
  auto base = *ParseUrl("http://127.0.0.1:8470/v1/api/artifacts/x");
  EXPECT_EQ(ResolveUrl(base, "/blob/1")->text, "http://127.0.0.1:8470/blob/1");
  EXPECT_EQ(ResolveUrl(base, "http://127.0.0.2:9/b")->host, "127.0.0.2");
  EXPECT_FALSE(ResolveUrl(base, "file:///etc/shadow").ok());
}

TEST(Url, PlainHttpOnlyToLoopbackUnlessAllowed) {
  EXPECT_TRUE(CheckTransportPolicy(*ParseUrl("https://coord.example/"), false).ok());
  EXPECT_TRUE(CheckTransportPolicy(*ParseUrl("http://127.0.0.1:1/"), false).ok());
  EXPECT_TRUE(CheckTransportPolicy(*ParseUrl("http://localhost:1/"), false).ok());
  EXPECT_TRUE(CheckTransportPolicy(*ParseUrl("http://[::1]:1/"), false).ok());
  EXPECT_FALSE(CheckTransportPolicy(*ParseUrl("http://coord.example/"), false).ok());
  EXPECT_FALSE(CheckTransportPolicy(*ParseUrl("http://127.0.0.1.evil.example/"), false).ok());
  EXPECT_TRUE(CheckTransportPolicy(*ParseUrl("http://coord.example/"), true).ok());
}

TEST(Url, IsLoopbackHostNeedsALiteral) {
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1x"));
  EXPECT_FALSE(IsLoopbackHost("128.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("localhost.example"));
}

TEST(Url, EscapesComponents) {
  EXPECT_EQ(EscapeComponent("scimesh-dev/42/n1"), "scimesh-dev%2F42%2Fn1");
  EXPECT_EQ(EscapeComponent("a b"), "a%20b");
}

}  // namespace
}  // namespace scimesh
