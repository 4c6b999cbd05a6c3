// scimesh-agent's flags: --kill-grace-ms, --connect, --help, --version.
#include "launcher/agent/agent_cli.h"

#include <linux/close_range.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "launcher/agent/agent_loop.h"
#include "launcher/agent/connect_back.h"
#include "launcher/agent/keeper.h"
#include "protocol/util/version.h"

namespace scimesh::agent {
namespace {

// How long --connect waits for the hello line, and then for the connection.
constexpr auto kConnectTimeout = std::chrono::seconds(5);

constexpr char kUsage[] = R"(Usage: scimesh-agent [options]

The scimesh node agent: started by scimesh-launch, one per node of an
allocation (srun --overlap -N1 -n1 -w NODE scimesh-agent), it forks the
launcher's 1-node steps on its node, pinned to the cpus they were placed on,
and reports their exits. Commands arrive on stdin and events leave on stdout,
one JSON object per line (docs/agent.md). Not meant to be run by hand.

When stdin ends (the launcher or its srun died) or on SIGTERM, SIGINT or
SIGHUP, the agent stops every step it started (SIGTERM to each step's process
group, SIGKILL after the grace) and exits. If the agent is killed outright, a
keeper process it forked at start kills every step's process group.

Options:
  --kill-grace-ms MS   SIGTERM -> SIGKILL for the steps when the agent shuts
                       down (default 2000)
  --connect            the direct channel: read "[HOST:]PORT SECRET" from the
                       first line of stdin, connect to the launcher over TCP
                       at HOST (numeric; default $SLURM_LAUNCH_NODE_IPADDR,
                       else 127.0.0.1) and PORT, send the secret, and carry
                       commands and events on that connection. If the line
                       is not that, or it cannot connect within 5 s, the
                       agent says why on stderr and stays on stdin/stdout.
  --version            print the version, the commit and the SLURM release
                       it was built from, and exit
  -h, --help           this help

Exit status: 0 after stdin ended, 128+N after signal N, 1 when the agent could
not run, 2 for a usage error.
)";

int Usage(const char* why) {
  (void)std::fprintf(stderr, "scimesh-agent: %s\nTry 'scimesh-agent --help'.\n", why);
  return 2;
}

}  // namespace

int RunAgentCli(int argc, char** argv) {
  AgentOptions options;
  options.version = std::string(ThisBuild().version);
  bool connect = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    if (arg == "-h" || arg == "--help") {
      (void)std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--version") {
      (void)std::puts(VersionLine("scimesh-agent").c_str());
      return 0;
    }
    if (arg == "--connect") {
      connect = true;
      continue;
    }
    if (arg.starts_with("--connect=")) {
      // The port and the secret come on stdin, never in argv (world-readable).
      return Usage("--connect takes no value: the port comes with the secret on stdin");
    }
    if (arg.starts_with("--kill-grace-ms=")) {
      value = arg.substr(std::strlen("--kill-grace-ms="));
    } else if (arg == "--kill-grace-ms") {
      if (++i == argc) return Usage("--kill-grace-ms needs a value");
      value = argv[i];
    } else {
      return Usage(("unknown argument '" + std::string(arg.substr(0, 64)) + "'").c_str());
    }
    int64_t ms = -1;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
    if (ec != std::errc() || end != value.data() + value.size() || ms < 0 || ms > 3600000) {
      return Usage("--kill-grace-ms must be a whole number of milliseconds from 0 to 3600000");
    }
    options.kill_grace = std::chrono::milliseconds(ms);
  }
  // Descriptors the agent inherited must not reach the steps it forks.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  // One pidfd per running step: take the whole open-files allowance, and
  // give each step back the limit the agent was started with.
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    rlimit raised = nofile;
    raised.rlim_cur = nofile.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) options.step_nofile = nofile;
  }
  auto keeper = Keeper::Start();
  if (!keeper.ok()) {
    (void)std::fprintf(stderr, "scimesh-agent: cannot start its keeper: %s\n", keeper.status().message().c_str());
    return 1;
  }
  UniqueFd direct;
  if (connect) {
    auto hello = ReadHelloLine(options.in_fd, kConnectTimeout);
    if (!hello.ok()) {
      (void)std::fprintf(stderr, "scimesh-agent: no direct channel: %s; staying on stdin/stdout\n",
                         hello.status().message().c_str());
    } else if (auto fd = ConnectBack(hello->target, hello->secret, kConnectTimeout); fd.ok()) {
      direct = std::move(*fd);
      options.direct_fd = options.out_fd = direct.get();
    } else {
      (void)std::fprintf(stderr, "scimesh-agent: no direct channel to %s port %s (%s); staying on stdin/stdout\n",
                         hello->target.host.c_str(), hello->target.port.c_str(), fd.status().message().c_str());
    }
  }
  return RunAgent(options, *keeper);
}

}  // namespace scimesh::agent
