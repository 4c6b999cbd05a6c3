// plugstack_probe: asks the SPANK plugin's own parsers what spank_scimesh(8) must document.
//
//   plugstack_probe --known        the plugstack.conf keys the plugin knows, one a line
//   plugstack_probe --option       the srun option, then the environment variables it reads
//   plugstack_probe KEY=VALUE...   exit 0 if the plugin accepts these arguments, else 1
//                                  with the plugin's message on stderr
//
// Used by check-man-plugstack.sh, so the page is compared with the code that
// slurmstepd runs, not with another document.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/lease_option.h"
#include "plugin/plugin_config.h"

namespace {

using scimesh::spank::ParsePluginArgs;

// The parser names every known key when it refuses an unknown one.
int PrintKnownKeys() {
  auto refused = ParsePluginArgs({"scimesh_docs_probe_unknown_key=1"});
  if (refused.ok()) {
    (void)std::fprintf(stderr, "plugstack_probe: the plugin accepted an unknown key\n");
    return 1;
  }
  const std::string message = refused.status().message();  // status() is a temporary
  const std::string marker = "(known: ";
  const size_t at = message.find(marker);
  const size_t end = at == std::string::npos ? at : message.find(')', at);
  if (end == std::string::npos) {
    (void)std::fprintf(stderr, "plugstack_probe: the plugin's message no longer lists its keys: %s\n", message.c_str());
    return 1;
  }
  std::string list = message.substr(at + marker.size(), end - at - marker.size());
  for (size_t start = 0; start <= list.size();) {
    size_t comma = list.find(", ", start);
    if (comma == std::string::npos) comma = list.size();
    std::printf("%s\n", list.substr(start, comma - start).c_str());
    start = comma + 2;
  }
  return 0;
}

int Run(int argc, char** argv) {
  const std::string_view first = argc > 1 ? argv[1] : "";
  if (first == "--known") return PrintKnownKeys();
  if (first == "--option") {
    std::printf("--%s\n%s\n%s\n", scimesh::spank::kLeaseOptionName, scimesh::spank::kLeaseEnvFallback,
                scimesh::spank::kAttemptDirEnv);
    return 0;
  }
  std::vector<std::string_view> args(argv + 1, argv + argc);
  auto parsed = ParsePluginArgs(args);
  if (!parsed.ok()) {
    (void)std::fprintf(stderr, "%s\n", parsed.status().message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "plugstack_probe: %s\n", e.what());
    return 2;
  }
}
