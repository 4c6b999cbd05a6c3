// Figures for libscimesh_protocol on loopback (prints, asserts nothing):
// lease-call round trips on one reused connection vs a new connection per
// call, and artifact download throughput with SHA-256 computed while streaming.
#include <sys/mman.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string_view>

#include "protocol/client/client.h"
#include "protocol/util/log.h"
#include "protocol/util/sha256.h"
#include "tests/client/hostile_server.h"

using namespace scimesh;
using testing::HostileServer;
using testing::RecordedRequest;
using testing::Reply;

namespace {

const std::string kExtend = R"({"lease_expires_at":"2026-11-29T08:00:41.300Z","lease_ttl_ms":30000})";

ClientOptions Options(const std::string& url) {
  ClientOptions o;
  o.coordinator_url = url;
  o.token = Token("bench-token");
  return o;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// The number of calls: argv[1] if given (a positive whole number, else nullopt), or 2000.
std::optional<int> Calls(int argc, char** argv) {
  if (argc < 2) return 2000;
  const std::string_view text = argv[1];
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1) return std::nullopt;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<int> parsed_calls = Calls(argc, argv);
  if (!parsed_calls) {
    (void)std::fprintf(stderr, "usage: %s [calls]  (a positive whole number; default 2000)\n", argv[0]);
    return 2;
  }
  const int calls = *parsed_calls;
  log::SetLevel(spdlog::level::err);
  const LeaseCall call{"l_00000000000000e1", 1, "bench/1", std::nullopt};
  auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, kExtend); });

  auto reused = Client::Create(Options(server->url())).value();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    if (!reused->Heartbeat(call).ok()) return 1;
  }
  const double reuse_s = Seconds(t0);

  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    auto fresh = Client::Create(Options(server->url())).value();  // new handle: new connection
    if (!fresh->Heartbeat(call).ok()) return 1;
  }
  const double fresh_s = Seconds(t0);

  const std::string blob(64u << 20, 'm');
  const std::string sha = Sha256Hex(blob);
  server->SetHandler([&](const RecordedRequest&) { return Reply::Bytes(200, blob, "application/octet-stream"); });
  const InputArtifact artifact{"s", "big.bin", server->url() + "/a", sha, static_cast<int64_t>(blob.size()), "x"};
  int fd = ::memfd_create("bench", MFD_CLOEXEC);
  t0 = std::chrono::steady_clock::now();
  const int downloads = 4;
  for (int i = 0; i < downloads; ++i) {
    if (!reused->DownloadArtifact(artifact, fd).ok()) return 1;
  }
  const double dl_s = Seconds(t0);
  ::close(fd);

  std::printf("heartbeat round trips, one reused connection: %d calls in %.3f s = %.0f calls/s (%.1f us each)\n",
              calls, reuse_s, calls / reuse_s, 1e6 * reuse_s / calls);
  std::printf("heartbeat round trips, new connection per call: %d calls in %.3f s = %.0f calls/s (%.1f us each)\n",
              calls, fresh_s, calls / fresh_s, 1e6 * fresh_s / calls);
  std::printf("artifact download + SHA-256 while streaming: %d x 64 MiB in %.3f s = %.0f MiB/s\n", downloads, dl_s,
              downloads * 64 / dl_s);
  return 0;
}
