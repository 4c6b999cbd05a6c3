// Flags, environment and signals for scimesh-launch; the report subcommand.
#include "launcher/cli.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <atomic>
#include <thread>

#include "launcher/launcher.h"
#include "launcher/timeline/timeline.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/util/log.h"

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
  --idle-exit S        exit after S seconds with nothing to do (default 300;
                       0: never)
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

int Report(int argc, char** argv) {
  std::string events, out;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "-o" || a == "--output") && i + 1 < argc) out = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::puts("Usage: scimesh-launch report EVENTS.jsonl [-o timeline.svg]\n\n"
                "Prints a summary of what the allocation did (steps, outcomes, core-time\n"
                "utilization) and, with -o, draws a Gantt chart of steps over nodes and cores.");
      return 0;
    } else if (events.empty()) events = a;
    else {
      std::fprintf(stderr, "scimesh-launch report: unexpected argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (events.empty()) {
    std::fprintf(stderr, "scimesh-launch report: give the events file\n");
    return 2;
  }
  std::ifstream in(events);
  if (!in) {
    std::fprintf(stderr, "scimesh-launch report: cannot read the events file\n");
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto t = ParseEvents(text.str());
  if (!t.ok()) {
    std::fprintf(stderr, "scimesh-launch report: %s\n", t.status().message().c_str());
    return 1;
  }
  std::fputs(TimelineSummary(*t).c_str(), stdout);
  if (!out.empty()) {
    std::ofstream svg(out);
    svg << TimelineSvg(*t);
    if (!svg) {
      std::fprintf(stderr, "scimesh-launch report: cannot write the SVG\n");
      return 1;
    }
    std::printf("timeline: %s\n", out.c_str());
  }
  return 0;
}

bool ParseSeconds(const std::string& s, std::chrono::seconds* out) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0) return false;
  *out = std::chrono::seconds(v);
  return true;
}

// `name` installed beside this program, or where the build tree puts it
// (`build_dir` relative to launcher/); else the bare name, found in PATH.
std::string Beside(const std::string& name, const std::filesystem::path& build_dir) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (auto candidate : {self.parent_path() / name, (self.parent_path() / build_dir / name).lexically_normal()}) {
      if (std::filesystem::exists(candidate, ec)) return candidate.string();
    }
  }
  return name;
}

}  // namespace

int RunCli(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == "report") return Report(argc, argv);
    LauncherConfig c;
    c.client.coordinator_url = Env("SCIMESH_URL", "http://127.0.0.1:8470");
    std::string spool = Env("SCIMESH_SPOOL");
    if (spool.empty()) spool = Env("SLURM_SUBMIT_DIR", ".") + "/scimesh-spool";
    c.launch.rank_wrapper = Beside("scimesh-rank", "../mpi");
    c.agent = Beside("scimesh-agent", "agent");
    bool verbose = false;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto value = [&](std::string* out) {
        if (i + 1 >= argc) return false;
        *out = argv[++i];
        return true;
      };
      std::string v;
      std::chrono::seconds secs{};
      bool ok = true;
      if (a == "-h" || a == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "--definitions") ok = value(&c.definitions_path);
      else if (a == "--url") ok = value(&c.client.coordinator_url);
      else if (a == "--spool") ok = value(&spool);
      else if (a == "--worker-id") ok = value(&c.worker_id);
      else if (a == "--events") ok = value(&c.events_path);
      else if (a == "--run") ok = value(&v) && (c.run_id = v, true);
      else if (a == "--scimesh-rank") ok = value(&c.launch.rank_wrapper);
      else if (a == "--scimesh-agent") ok = value(&c.agent);
      else if (a == "--agents") {
        ok = value(&v) && (v == "yes" || v == "no");
        c.agents = v == "yes";
      }
      else if (a == "--spank") c.spank = SpankUse::kYes;
      else if (a.rfind("--spank=", 0) == 0) {
        auto use = ParseSpankUse(a.substr(8));
        if (!use.ok()) {
          std::fprintf(stderr, "scimesh-launch: %s (see --help)\n", use.status().message().c_str());
          return 2;
        }
        c.spank = *use;
      }
      else if (a == "--topology") ok = value(&c.topology);
      else if (a == "--allow-insecure-http") c.client.allow_insecure_http = true;
      else if (a == "-v" || a == "--verbose") verbose = true;
      else if (a == "--backend") {
        ok = value(&v) && (v == "slurm" || v == "local");
        if (ok) c.backend = v == "slurm" ? Backend::kSlurm : Backend::kLocal;
      } else if (a == "--concurrency") {
        ok = value(&v) && (c.policy.concurrency = std::atoi(v.c_str())) > 0;
      } else if (a == "--wait-ms") {
        ok = value(&v) && (c.wait_ms = std::atoll(v.c_str())) >= 0;
      } else if (a == "--drain-margin") {
        ok = value(&v) && ParseSeconds(v, &c.policy.drain_margin);
      } else if (a == "--drain-grace") {
        ok = value(&v) && ParseSeconds(v, &c.drain_grace);
      } else if (a == "--idle-exit") {
        ok = value(&v) && ParseSeconds(v, &c.idle_exit);
      } else if (a == "--kill-grace") {
        ok = value(&v) && ParseSeconds(v, &secs);
        c.kill_grace = secs;
      } else if (a == "--walltime") {
        ok = value(&v) && ParseSeconds(v, &secs);
        c.walltime = secs;
      } else {
        std::fprintf(stderr, "scimesh-launch: unknown option '%s' (see --help)\n", a.c_str());
        return 2;
      }
      if (!ok) {
        std::fprintf(stderr, "scimesh-launch: option '%s' needs a valid value (see --help)\n", a.c_str());
        return 2;
      }
    }
    if (c.definitions_path.empty()) {
      std::fprintf(stderr, "scimesh-launch: --definitions FILE is required (see --help)\n");
      return 2;
    }
    log::SetLevel(verbose ? spdlog::level::debug : spdlog::level::info);
    auto token = LoadTokenFromEnvironment();
    if (!token.ok()) {
      std::fprintf(stderr, "scimesh-launch: %s\n", token.status().message().c_str());
      return 2;
    }
    c.client.token = *token;
    // This process holds the key: no core file, no ptrace by the user's other
    // processes (the steps it spawns are dumpable again after their exec).
    if (Status s = ProtectKeyHolder(); !s.ok()) {
      std::fprintf(stderr, "scimesh-launch: %s\n", s.message().c_str());
      return 1;
    }
    // Created 0700 whatever the umask; an existing spool of another user, or
    // one group/others could write, is refused: they could plant lease.json.
    c.spool_dir = std::filesystem::absolute(spool).lexically_normal().string();
    while (c.spool_dir.size() > 1 && c.spool_dir.back() == '/') c.spool_dir.pop_back();
    if (auto dir = MakePrivateDirectory(c.spool_dir, ::geteuid(), "spool directory"); !dir.ok()) {
      std::fprintf(stderr, "scimesh-launch: %s\n", dir.status().message().c_str());
      return 2;
    }

    // Signals go to one thread that turns them into a drain.
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGUSR1, SIGTERM, SIGINT}) sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);

    auto launcher = Launcher::Create(std::move(c));
    if (!launcher.ok()) {
      std::fprintf(stderr, "scimesh-launch: %s\n", launcher.status().message().c_str());
      return 1;
    }
    Launcher* l = launcher->get();
    std::atomic<bool> done{false};
    std::thread signals([l, set, &done] {
      int count = 0;
      for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0 || done.load()) return;
        if (sig == SIGUSR1 && count == 0) {
          l->RequestDrain("SIGUSR1");
        } else {
          ++count;
          if (count > 1) {
            l->RequestDrain("second signal: stopping steps now");
            l->StopNow();
          } else if (sig == SIGTERM) {
            l->AllocationSignalled("SIGTERM");
          } else {
            l->RequestDrain("SIGINT");
          }
        }
      }
    });
    // The Launcher is destroyed when this scope ends: the signal thread must be
    // gone first, or a late SIGTERM reaches a freed Launcher (ThreadSanitizer
    // saw RequestDrain race ~Launcher after a failed register).
    struct JoinSignals {
      std::thread& thread;
      std::atomic<bool>& done;
      ~JoinSignals() {
        done.store(true);
        pthread_kill(thread.native_handle(), SIGUSR1);  // wakes its sigwait
        thread.join();
      }
    } join_signals{signals, done};
    return l->Run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scimesh-launch: internal error: %s\n", e.what());
    return 70;
  }
}

}  // namespace scimesh::launcher
