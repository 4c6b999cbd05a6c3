// scimesh-alloc: the state directory and lock, the batch script, the client,
// the tick loop under SIGINT/SIGTERM, --dry-run, and `status`.
#include "launcher/alloc/alloc_cli.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "launcher/alloc/alloc_options.h"
#include "launcher/alloc/alloc_state_dir.h"
#include "launcher/alloc/alloc_status.h"
#include "launcher/definitions/step_commands.h"
#include "protocol/client/client.h"
#include "protocol/util/atomic_file.h"
#include "protocol/util/host_name.h"
#include "protocol/util/log.h"
#include "protocol/util/token.h"
#include "protocol/util/version.h"

namespace scimesh::alloc {
namespace {

auto Log() { return log::For("alloc"); }

int Fail(const Status& s, int code) {
  std::fprintf(stderr, "scimesh-alloc: %s\n", log::EscapeForLog(s.message()).c_str());
  return code;
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// scimesh-alloc status [--name NAME | --state-dir DIR]
int StatusCommand(int argc, char** argv) {
  std::string dir, name;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--state-dir" || a == "--name") && i + 1 < argc) (a == "--name" ? name : dir) = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::puts("Usage: scimesh-alloc status [--name NAME | --state-dir DIR]\n\n"
                "Prints what the scimesh-alloc of that name (default: the only one under\n"
                "$HOME/.scimesh/alloc) saw and did at its last decision, as a table.");
      return 0;
    } else {
      return Fail(Status(Code::kInvalidArgument, "status: unexpected argument '" + a + "'"), 2);
    }
  }
  const char* home = std::getenv("HOME");
  const std::string root = std::string(home != nullptr ? home : "") + "/.scimesh/alloc";
  if (dir.empty() && !name.empty()) dir = root + "/" + name;
  if (dir.empty()) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root, ec)) names.push_back(e.path().filename());
    if (names.size() != 1) {
      std::string all;
      for (const auto& n : names) all += " " + n;
      return Fail(Status(Code::kInvalidArgument, names.empty() ? "no scimesh-alloc state under $HOME/.scimesh/alloc"
                                                               : "give --name, one of:" + all),
                  1);
    }
    dir = root + "/" + names.front();
  }
  std::ifstream in(dir + "/status.json");
  if (!in) return Fail(Status(Code::kNotFound, "no status in " + dir + " (has scimesh-alloc run there?)"), 1);
  std::stringstream text;
  text << in.rdbuf();
  auto table = StatusTable(text.str(), StateDirLocked(dir));
  if (!table.ok()) return Fail(table.status(), 1);
  std::fputs(table->c_str(), stdout);
  return 0;
}

// Shapes without cores= get the partition's smallest node.
Status FillCores(AllocOptions& o) {
  std::optional<long long> cpus;  // asked once, when a shape needs it
  for (auto& shape : o.shapes) {
    if (shape.cores_per_node > 0) continue;
    if (!cpus) {
      auto asked = PartitionNodeCpus(o.partition);
      if (!asked.ok()) {
        return Status(Code::kUnavailable, "cannot tell the CPUs of a node (" + asked.status().message() +
                                              "): give cores= in each --shape");
      }
      cpus = *asked;
    }
    shape.cores_per_node = *cpus;
  }
  return Status::Ok();
}

LoopSettings Settings(const AllocOptions& o) {
  LoopSettings s;
  s.shapes = o.shapes;
  s.limits = o.limits;
  s.job.tag = JobTag(o);
  s.job.partition = o.partition;
  s.job.account = o.account;
  s.job.qos = o.qos;
  s.job.extra_args = o.sbatch_args;
  s.job.signal_s = o.launch.drain_margin_s + 60;
  s.job.output = o.state_dir + "/jobs/" + JobTag(o) + "-%j.out";
  s.job.script = o.state_dir + (o.dry_run ? "/fill.sbatch.dry-run" : "/fill.sbatch");  // never the live one
  s.failure_limit = o.failure_limit;
  s.pause_s = o.pause_s;
  s.dry_run = o.dry_run;
  return s;
}

// --dry-run: the script, each shape through sbatch --test-only, one decision.
int DryRun(AllocLoop& loop, SlurmJobs& slurm, const std::string& script) {
  std::printf("# the batch script (%s)\n%s\n", loop.settings().job.script.c_str(), script.c_str());
  bool all_ok = true;
  for (const auto& shape : loop.settings().shapes) {
    JobRequest request = loop.settings().job;
    request.shape = shape;
    const Status s = slurm.Test(request);
    all_ok = all_ok && s.ok();
    std::printf("shape %s: %s\n", ShapeText(shape).c_str(),
                s.ok() ? "sbatch --test-only accepts it" : log::EscapeForLog(s.message()).c_str());
  }
  std::printf("decision now: %s\n", log::EscapeForLog(loop.Tick()).c_str());
  return all_ok ? 0 : 1;
}

void WriteStatus(const AllocOptions& o, const AllocLoop& loop, const Clock& clock) {
  StatusHeader h{o.name, o.url, static_cast<int64_t>(::getpid()), UtcNow(), 0};
  if (loop.state().paused_until && clock.Now() < *loop.state().paused_until) {
    h.paused_s = std::chrono::duration_cast<std::chrono::seconds>(*loop.state().paused_until - clock.Now()).count();
  }
  if (Status s = WriteFileAtomically(o.state_dir + "/status.json", StatusJson(h, loop.state(), loop.settings()), 0600);
      !s.ok()) {
    Log()->warn("cannot write status.json: {}", s.message());
  }
}

// The definitions, checked to hold every --workflow.
Result<std::vector<WorkflowDefinition>> Definitions(const AllocOptions& o) {
  auto commands = launcher::StepCommands::Load(o.launch.definitions);
  if (!commands.ok()) return Status(Code::kInvalidArgument, "--definitions: " + commands.status().message());
  for (const auto& w : o.workflows) {
    bool found = false;
    for (const auto& d : commands->definitions()) found = found || d.workflow == w;
    if (!found) return Status(Code::kInvalidArgument, "--workflow " + w + " is not in the --definitions file");
  }
  return commands->definitions();
}

// Registers the definitions, as a launcher does, so that runs can start
// before any allocation exists. True once done.
bool Register(Client& client, const AllocOptions& o, const std::vector<WorkflowDefinition>& definitions) {
  RegisterRequest reg;
  reg.worker_id = "alloc/" + o.name;
  reg.host = HostName();
  reg.version = "scimesh-alloc " + std::string(ThisBuild().version);
  reg.concurrency = 1;
  reg.definitions = definitions;
  auto registered = client.Register(reg, Millis(5000));
  if (!registered.ok()) {
    Log()->warn("{}; trying again at the next decision", registered.status().message());
    return false;
  }
  Log()->info("registered {} workflow definition(s) with the coordinator", definitions.size());
  return true;
}

// Ticks every --interval until SIGINT or SIGTERM (blocked, taken by sigtimedwait).
int Serve(const AllocOptions& o, AllocLoop& loop, const sigset_t& stop, const std::function<bool()>& register_once) {
  std::string last;
  bool registered = false;
  for (;;) {
    registered = registered || register_once();
    const std::string& line = loop.Tick();
    if (line != last) Log()->info("{}", line);
    last = line;
    WriteStatus(o, loop, SteadyClock());
    if (o.once) return 0;
    const timespec wait{static_cast<time_t>(o.interval_s), 0};
    const int sig = ::sigtimedwait(&stop, nullptr, &wait);
    if (sig == SIGINT || sig == SIGTERM) {
      Log()->info("stopping on signal {}; its {} jobs stay (a restart adopts them)", sig, loop.state().jobs.size());
      return 0;
    }
  }
}

}  // namespace

int RunAllocCli(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "status") return StatusCommand(argc, argv);
  auto options = ParseAllocOptions(argc, argv);
  if (!options.ok()) return Fail(options.status(), 2);
  if (options->help) return std::fputs(AllocUsage(), stdout), 0;
  if (options->version) return std::puts(VersionLine("scimesh-alloc").c_str()), 0;
  log::SetLevel(options->verbose ? spdlog::level::debug : spdlog::level::info);
  AllocOptions& o = *options;
  auto token = LoadTokenFromEnvironment();
  if (!token.ok()) return Fail(token.status(), 1);
  if (Status s = ProtectKeyHolder(); !s.ok()) return Fail(s, 1);
  if (Status s = MakeStateDir(o.state_dir); !s.ok()) return Fail(s, 1);
  if (!o.dry_run) {
    if (Status s = LockStateDir(o.state_dir); !s.ok()) return Fail(s, 1);
  }
  auto definitions = Definitions(o);
  if (!definitions.ok()) return Fail(definitions.status(), 2);
  if (!o.dry_run) {  // the names are the definitions' (checked): safe as file names
    const char* home = std::getenv("HOME");
    const std::string locks = home != nullptr && *home != '\0' ? std::string(home) + "/.scimesh/locks"
                                                               : o.state_dir + "/locks";
    if (Status s = LockWorkflows(o.workflows, locks); !s.ok()) return Fail(s, 1);
  }
  if (Status s = FillCores(o); !s.ok()) return Fail(s, 1);
  const std::string script = BatchScript(o.launch);
  const LoopSettings settings = Settings(o);
  if (Status s = WriteFileAtomically(settings.job.script, script, 0700); !s.ok()) return Fail(s, 1);
  ClientOptions client_options;
  client_options.coordinator_url = o.url;
  client_options.token = *token;
  client_options.allow_insecure_http = o.allow_insecure_http;
  // A decision retries an unreachable coordinator for at most its interval
  // (5 to 30 s), then changes nothing until the next one.
  client_options.retry_budget = Millis(std::clamp<int64_t>(o.interval_s, 5, 30) * 1000);
  auto client = Client::Create(std::move(client_options));
  if (!client.ok()) return Fail(client.status(), 1);
  DemandQuery query{o.workflows};
  auto demand = [&client, &query] { return (*client)->Demand(query); };
  auto slurm = CommandSlurmJobs();
  AllocLoop loop(settings, demand, *slurm, SteadyClock());
  if (o.dry_run) return DryRun(loop, *slurm, script);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stop, nullptr);
  Log()->info("serving {} workflow(s) as {} ({} shape(s), --max-jobs {}, --max-nodes {}, --backlog {})",
              o.workflows.size(), JobTag(o), o.shapes.size(), o.limits.max_jobs, o.limits.max_nodes,
              o.limits.backlog);
  return Serve(o, loop, stop, [&] { return Register(**client, o, *definitions); });
}

}  // namespace scimesh::alloc
