// scimesh-launch's flags: their defaults, their values, the usage text.
#include "launcher/cli_options.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "launcher/beside_program.h"

namespace scimesh::launcher {
namespace {

constexpr char kUsage[] = R"(Usage: scimesh-launch [options] --definitions FILE
       scimesh-launch report EVENTS.jsonl [-o timeline.svg]

Runs inside a SLURM allocation (sbatch/salloc) or on a plain host and fills it
with steps leased from a scimesh coordinator until the queue is empty, the
allocation's time is up, or it is told to drain. Each step is placed on exact
cores (hwloc), started by its node's agent or `srun --exact` (SLURM) or
mpirun/fork (local), heartbeated, and reported complete or failed. Steps that
would not finish before the allocation ends are never claimed.

Options:
  --definitions FILE   the workflows this launcher serves and the command of
                       each step (JSON; see docs/launcher.md)           [required]
  --url URL            coordinator URL (default $SCIMESH_URL, else
                       http://127.0.0.1:8470)
  --spool DIR          where attempt directories go; must be visible on every
                       node (default $SCIMESH_SPOOL, else
                       $SLURM_SUBMIT_DIR/scimesh-spool, else ./scimesh-spool);
                       created 0700; refused when another user's or writable
                       by group or others
  --backend B          slurm | local (default: slurm inside an allocation)
  --worker-id ID       default slurm/<job id>/<node>, or <host>/<pid>
  --events FILE        append JSON-lines events here (for `report`)
  --concurrency N      most steps held at once (default 64)
  --drain-margin S     stop claiming S seconds before the allocation ends and
                       drain (default 120)
  --drain-grace S      on drain, running steps get S seconds to finish before
                       they are stopped and failed `preempted` (default 60)
  --walltime S         treat the allocation as ending S seconds from now
  --idle-exit S        exit after S seconds with nothing to do, also when the
                       coordinator cannot be reached (default 300; 0: never)
  --register-retry S   at start, retry an unreachable coordinator for S
                       seconds, then exit 1 (default 15)
  --wait-ms MS         long-poll time of each claim (default 20000)
  --run ID             only claim steps of this run
  --kill-grace S       SIGTERM -> SIGKILL for a stopped step (default 10)
  --scimesh-rank PATH  the rank wrapper (default: beside this program)
  --agents WHEN        yes (the default) or no: inside an allocation, start
                       one scimesh-agent per node (an srun step overlapping
                       the others) and have it fork single-rank steps,
                       pinned, without an srun each; no sends every step
                       through srun (each then has its own sacct line and
                       the SPANK plugin)
  --scimesh-agent PATH the node agent (default: beside this program)
  --spank[=WHEN]       pass --scimesh-lease to each srun, so the site's SPANK
                       plugin cancels a step whose lease is lost: auto (the
                       default) when `srun --help` lists the option; yes
                       (the bare flag) requires it and fails at start when
                       the plugin is not loaded; no never passes it
  --topology SOURCE    place steps as if every node had this hardware: an
                       hwloc XML file, or synthetic:DESCRIPTION (e.g.
                       "synthetic:core:32 pu:1"); default: hwloc on this node,
                       and each other node's own, probed once at start (one
                       srun running lstopo-no-graphics; mixed node types)
  --allow-insecure-http  plain http to a non-loopback coordinator
  -v, --verbose        debug logging
  --version            print the version, the commit and the SLURM release
                       it was built from, and exit
  -h, --help           this help

Token: $SCIMESH_TOKEN_FILE (a 0600 file) or $SCIMESH_TOKEN; never argv.
Signals: SIGUSR1 or SIGTERM drain (use sbatch --signal=B:USR1@180); a second
SIGTERM/SIGINT stops running steps at once (they fail `preempted`).

Example (sbatch script):
  #SBATCH -N 8 -t 4:00:00 --signal=B:USR1@180
  export SCIMESH_URL=https://coordinator.example:8470 SCIMESH_TOKEN_FILE=$HOME/.scimesh/token
  scimesh-launch --definitions mesh-study.launch.json --events events.jsonl
)";

std::string Env(const char* name, std::string fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// Whole seconds, at least 0, into `out`: a duration or an optional one.
template <typename Out>
bool ParseSeconds(const std::string& s, Out* out) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0) return false;
  *out = std::chrono::seconds(v);
  return true;
}

// What applies before the flags: the environment's URL and spool, the rank
// wrapper and agent beside this program.
CliOptions Defaults() {
  CliOptions o;
  o.config.client.coordinator_url = Env("SCIMESH_URL", "http://127.0.0.1:8470");
  o.spool = Env("SCIMESH_SPOOL");
  if (o.spool.empty()) o.spool = Env("SLURM_SUBMIT_DIR", ".") + "/scimesh-spool";
  o.config.launch.rank_wrapper = BesideThisProgram("scimesh-rank", "../mpi");
  o.config.agent = BesideThisProgram("scimesh-agent", "agent");
  return o;
}

// A flag without a value: true when `a` is one (and was applied).
Result<bool> ApplyFlag(const std::string& a, CliOptions& o) {
  if (a == "-h" || a == "--help") o.help = true;
  else if (a == "--version") o.version = true;
  else if (a == "--spank") o.config.spank = SpankUse::kYes;
  else if (a.rfind("--spank=", 0) == 0) {
    auto use = ParseSpankUse(a.substr(8));
    if (!use.ok()) return Status::InvalidArgument(use.status().message() + " (see --help)");
    o.config.spank = *use;
  } else if (a == "--allow-insecure-http") o.config.client.allow_insecure_http = true;
  else if (a == "-v" || a == "--verbose") o.verbose = true;
  else return false;
  return true;
}

// An option that takes a value: stores it; false when the value is not valid.
struct ValueOption {
  std::string_view name;
  bool (*apply)(const std::string& v, CliOptions& o);
};

constexpr ValueOption kValueOptions[] = {
    {"--definitions", [](const std::string& v, CliOptions& o) { o.config.definitions_path = v; return true; }},
    {"--url", [](const std::string& v, CliOptions& o) { o.config.client.coordinator_url = v; return true; }},
    {"--spool", [](const std::string& v, CliOptions& o) { o.spool = v; return true; }},
    {"--worker-id", [](const std::string& v, CliOptions& o) { o.config.worker_id = v; return true; }},
    {"--events", [](const std::string& v, CliOptions& o) { o.config.events_path = v; return true; }},
    {"--run", [](const std::string& v, CliOptions& o) { o.config.run_id = v; return true; }},
    {"--scimesh-rank", [](const std::string& v, CliOptions& o) { o.config.launch.rank_wrapper = v; return true; }},
    {"--scimesh-agent", [](const std::string& v, CliOptions& o) { o.config.agent = v; return true; }},
    {"--topology", [](const std::string& v, CliOptions& o) { o.config.topology = v; return true; }},
    {"--agents",
     [](const std::string& v, CliOptions& o) {
       o.config.agents = v == "yes";
       return v == "yes" || v == "no";
     }},
    {"--backend",
     [](const std::string& v, CliOptions& o) {
       if (v != "slurm" && v != "local") return false;
       o.config.backend = v == "slurm" ? Backend::kSlurm : Backend::kLocal;
       return true;
     }},
    {"--concurrency",
     [](const std::string& v, CliOptions& o) { return (o.config.policy.concurrency = std::atoi(v.c_str())) > 0; }},
    {"--wait-ms", [](const std::string& v, CliOptions& o) { return (o.config.wait_ms = std::atoll(v.c_str())) >= 0; }},
    {"--drain-margin",
     [](const std::string& v, CliOptions& o) { return ParseSeconds(v, &o.config.policy.drain_margin); }},
    {"--drain-grace", [](const std::string& v, CliOptions& o) { return ParseSeconds(v, &o.config.drain_grace); }},
    {"--idle-exit", [](const std::string& v, CliOptions& o) { return ParseSeconds(v, &o.config.idle_exit); }},
    {"--register-retry",
     [](const std::string& v, CliOptions& o) { return ParseSeconds(v, &o.config.register_retry); }},
    {"--kill-grace", [](const std::string& v, CliOptions& o) { return ParseSeconds(v, &o.config.kill_grace); }},
    {"--walltime", [](const std::string& v, CliOptions& o) { return ParseSeconds(v, &o.config.walltime); }},
};

const ValueOption* ValueOptionNamed(std::string_view name) {
  for (const ValueOption& option : kValueOptions) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

}  // namespace

Result<CliOptions> ParseCliOptions(int argc, char** argv) {
  CliOptions o = Defaults();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto flag = ApplyFlag(a, o);
    if (!flag.ok()) return flag.status();
    if (o.help || o.version) return o;
    if (*flag) continue;
    const ValueOption* option = ValueOptionNamed(a);
    if (option == nullptr) return Status::InvalidArgument("unknown option '" + a + "' (see --help)");
    if (i + 1 >= argc || !option->apply(argv[++i], o)) {
      return Status::InvalidArgument("option '" + a + "' needs a valid value (see --help)");
    }
  }
  if (o.config.definitions_path.empty()) {
    return Status::InvalidArgument("--definitions FILE is required (see --help)");
  }
  return o;
}

const char* CliUsage() { return kUsage; }

}  // namespace scimesh::launcher
