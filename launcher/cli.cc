// scimesh-launch: flags to a running Launcher (the spool made private, signals
// turned into drains), and the report subcommand.
#include "launcher/cli.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "launcher/cli_options.h"
#include "launcher/launcher.h"
#include "launcher/timeline/timeline.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/util/log.h"
#include "protocol/util/version.h"

namespace scimesh::launcher {
namespace {

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

// Prints why the launcher does not start; returns `exit_code`.
int Refuse(const Status& why, int exit_code) {
  std::fprintf(stderr, "scimesh-launch: %s\n", why.message().c_str());
  return exit_code;
}

// Makes `spool` absolute, without a trailing slash, as config->spool_dir.
// Created 0700 whatever the umask; an existing spool of another user, or
// one group/others could write, is refused: they could plant lease.json.
Status UsePrivateSpool(const std::string& spool, LauncherConfig* config) {
  config->spool_dir = std::filesystem::absolute(spool).lexically_normal().string();
  while (config->spool_dir.size() > 1 && config->spool_dir.back() == '/') config->spool_dir.pop_back();
  return MakePrivateDirectory(config->spool_dir, ::geteuid(), "spool directory").status();
}

// Turns SIGUSR1, SIGTERM and SIGINT (blocked in every thread: `set`) into
// drains of one Launcher, on a thread of its own. The Launcher must outlive
// this: the thread is joined on destruction, or a late SIGTERM reaches a freed
// Launcher (ThreadSanitizer saw RequestDrain race ~Launcher after a failed
// register).
class SignalDrain {
 public:
  SignalDrain(Launcher* launcher, const sigset_t& set) : thread_([this, launcher, set] { Wait(launcher, set); }) {}
  ~SignalDrain() {
    done_.store(true);
    pthread_kill(thread_.native_handle(), SIGUSR1);  // wakes its sigwait
    thread_.join();
  }
  SignalDrain(const SignalDrain&) = delete;
  SignalDrain& operator=(const SignalDrain&) = delete;

 private:
  // SIGUSR1 drains; a first SIGTERM says the allocation ends, a first SIGINT
  // drains; any signal after a SIGTERM or SIGINT stops running steps at once.
  void Wait(Launcher* l, sigset_t set) {
    int count = 0;
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0 || done_.load()) return;
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
  }

  std::atomic<bool> done_{false};
  std::thread thread_;  // last: started once done_ exists
};

// Creates the Launcher and runs it to its exit code, signals turned into drains.
int RunLauncher(LauncherConfig config) {
  // Signals go to one thread that turns them into a drain; blocked before
  // the Launcher starts threads of its own, so that they inherit the mask.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGUSR1, SIGTERM, SIGINT}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto launcher = Launcher::Create(std::move(config));
  if (!launcher.ok()) return Refuse(launcher.status(), 1);
  Launcher* l = launcher->get();
  SignalDrain signals(l, set);
  return l->Run();
}

}  // namespace

int RunCli(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == "report") return Report(argc, argv);
    auto options = ParseCliOptions(argc, argv);
    if (!options.ok()) return Refuse(options.status(), 2);
    if (options->help) {
      std::fputs(CliUsage(), stdout);
      return 0;
    }
    if (options->version) {
      std::puts(VersionLine("scimesh-launch").c_str());
      return 0;
    }
    log::SetLevel(options->verbose ? spdlog::level::debug : spdlog::level::info);
    LauncherConfig& c = options->config;
    auto token = LoadTokenFromEnvironment();
    if (!token.ok()) return Refuse(token.status(), 2);
    c.client.token = *token;
    // This process holds the key: no core file, no ptrace by the user's other
    // processes (the steps it spawns are dumpable again after their exec).
    if (Status s = ProtectKeyHolder(); !s.ok()) return Refuse(s, 1);
    if (Status s = UsePrivateSpool(options->spool, &c); !s.ok()) return Refuse(s, 2);
    return RunLauncher(std::move(c));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scimesh-launch: internal error: %s\n", e.what());
    return 70;
  }
}

}  // namespace scimesh::launcher
