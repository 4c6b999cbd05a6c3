// scimesh-alloc's flags and config file: defaults, values, the usage text.
#include "launcher/alloc/alloc_options.h"

#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "launcher/beside_program.h"

namespace scimesh::alloc {
namespace {

constexpr char kUsage[] = R"(Usage: scimesh-alloc [options] --workflow NAME --shape SPEC --definitions FILE
       scimesh-alloc status [--name NAME | --state-dir DIR]

Runs on a login node and submits the SLURM allocations the coordinator's
queued steps need, and no more: it asks the coordinator for the demand of
its workflows (GET /v1/api/demand) every --interval, submits allocations
that run scimesh-launch (the same script as examples/fill.sbatch, written to
the state directory) when runnable steps are not covered by running or
pending allocations, and cancels its pending allocations when the demand
they were for is gone. Running allocations end themselves (--idle-exit).
Its jobs are named scimesh-alloc-NAME: restarted, it adopts them.

Options:
  --config FILE        read options from FILE first: one "option value" per
                       line (the long name without --; allow-insecure-http
                       and verbose alone), # comments; flags after --config
                       win, list options add up
  --url URL            coordinator URL (default $SCIMESH_URL, else
                       http://127.0.0.1:8470); the worker key comes from
                       $SCIMESH_TOKEN_FILE (also given to the allocations)
                       or $SCIMESH_TOKEN
  --workflow NAME      a workflow whose demand it serves (repeat)  [required]
  --shape SPEC         an allocation it may submit (repeat): nodes=N,time=T
                       with SLURM's time (30, 1:00:00, 1-0); add cores=N
                       for the CPUs a node gives (default: the partition's
                       smallest node, from sinfo) and gpus=N   [required]
  --name NAME          the jobs' tag, scimesh-alloc-NAME (default: the
                       workflows joined by +); letters, digits, . _ + -
  --partition P        sbatch -p
  --account A          sbatch -A
  --qos Q              sbatch -q
  --sbatch-arg ARG     one more sbatch argument, as given (repeat), e.g.
                       --sbatch-arg=--constraint=ib
  --max-jobs N         most jobs, pending and running (default 4)
  --max-nodes N        most nodes over those jobs (default 8)
  --backlog N          most pending jobs at once (default 1)
  --interval S         seconds between decisions (default 30)
  --failure-limit N    sbatch refusals in a row before a pause (default 3)
  --pause S            the first pause; each later one doubles, to 16x
                       (default 300)
  --definitions FILE   the launchers' --definitions              [required]
  --spool DIR          the launchers' --spool (default ./scimesh-spool)
  --idle-exit S        an allocation with nothing to do ends after S
                       seconds (default 120)
  --drain-margin S     the launchers stop claiming S seconds before the end
                       (default 120); a shape runs steps for time - S
  --drain-grace S      the launchers' --drain-grace (default 60)
  --launcher PATH      scimesh-launch (default: beside this program, else
                       found in PATH)
  --launcher-arg ARG   one more scimesh-launch argument (repeat)
  --state-dir DIR      its lock, batch script, status and the jobs' output
                       (default $HOME/.scimesh/alloc/NAME)
  --dry-run            print the batch script (written beside the live one,
                       as fill.sbatch.dry-run), check each shape with
                       sbatch --test-only and print the decision for the
                       demand now; submit and cancel nothing
  --once               make one decision and exit
  --allow-insecure-http  plain http to a non-loopback coordinator, for
                       this program and the launchers it submits
  -v, --verbose        debug logging
  -h, --help           this text
  --version            the version line
)";

Result<int64_t> Count(const std::string& v, std::string_view flag, int64_t lo) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < lo || n > 1000000) {
    return Status(Code::kInvalidArgument, std::string(flag) + ": '" + v + "' is not a whole number from " +
                                              std::to_string(lo));
  }
  return n;
}

using Setter = std::function<Status(const std::string&, AllocOptions&)>;

Setter Text(std::string AllocOptions::*field) {
  return [field](const std::string& v, AllocOptions& o) {
    o.*field = v;
    return Status::Ok();
  };
}
Setter Launch(std::string LaunchSettings::*field) {
  return [field](const std::string& v, AllocOptions& o) {
    o.launch.*field = v;
    return Status::Ok();
  };
}
Setter Number(std::string_view flag, int64_t lo, std::function<int64_t&(AllocOptions&)> field) {
  return [flag, lo, field](const std::string& v, AllocOptions& o) {
    auto n = Count(v, flag, lo);
    if (!n.ok()) return n.status();
    field(o) = *n;
    return Status::Ok();
  };
}

const std::map<std::string, Setter, std::less<>>& Setters() {
  static const std::map<std::string, Setter, std::less<>> setters{
      {"--url", Text(&AllocOptions::url)},
      {"--workflow", [](const std::string& v, AllocOptions& o) { o.workflows.push_back(v); return Status::Ok(); }},
      {"--shape",
       [](const std::string& v, AllocOptions& o) {
         auto s = ParseShape(v);
         if (!s.ok()) return Status(Code::kInvalidArgument, "--shape: " + s.status().message());
         o.shapes.push_back(*s);
         return Status::Ok();
       }},
      {"--name", Text(&AllocOptions::name)},
      {"--partition", Text(&AllocOptions::partition)},
      {"--account", Text(&AllocOptions::account)},
      {"--qos", Text(&AllocOptions::qos)},
      {"--sbatch-arg", [](const std::string& v, AllocOptions& o) { o.sbatch_args.push_back(v); return Status::Ok(); }},
      {"--max-jobs", Number("--max-jobs", 1, [](AllocOptions& o) -> int64_t& { return o.limits.max_jobs; })},
      {"--max-nodes", Number("--max-nodes", 1, [](AllocOptions& o) -> int64_t& { return o.limits.max_nodes; })},
      {"--backlog", Number("--backlog", 1, [](AllocOptions& o) -> int64_t& { return o.limits.backlog; })},
      {"--interval", Number("--interval", 1, [](AllocOptions& o) -> int64_t& { return o.interval_s; })},
      {"--failure-limit", Number("--failure-limit", 1, [](AllocOptions& o) -> int64_t& { return o.failure_limit; })},
      {"--pause", Number("--pause", 1, [](AllocOptions& o) -> int64_t& { return o.pause_s; })},
      {"--definitions", Launch(&LaunchSettings::definitions)},
      {"--spool", Launch(&LaunchSettings::spool)},
      {"--idle-exit", Number("--idle-exit", 1, [](AllocOptions& o) -> int64_t& { return o.launch.idle_exit_s; })},
      {"--drain-margin",
       Number("--drain-margin", 0, [](AllocOptions& o) -> int64_t& { return o.launch.drain_margin_s; })},
      {"--drain-grace", Number("--drain-grace", 0, [](AllocOptions& o) -> int64_t& { return o.launch.drain_grace_s; })},
      {"--launcher", Launch(&LaunchSettings::launcher)},
      {"--launcher-arg",
       [](const std::string& v, AllocOptions& o) { o.launch.launcher_args.push_back(v); return Status::Ok(); }},
      {"--state-dir", Text(&AllocOptions::state_dir)},
  };
  return setters;
}

Status Bad(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

// Each line "option value" -> {"--option", "value"}.
Result<std::vector<std::string>> ConfigWords(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Bad("--config: cannot read " + path);
  std::vector<std::string> words;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const size_t space = line.find_first_of(" \t=", start);
    const std::string key = "--" + line.substr(start, space - start);
    std::string value;
    if (space != std::string::npos) {
      const size_t v = line.find_first_not_of(" \t=", space);
      const size_t end = line.find_last_not_of(" \t\r");
      if (v != std::string::npos) value = line.substr(v, end + 1 - v);
    }
    const bool flag = key == "--allow-insecure-http" || key == "--verbose";
    if (!flag && (key == "--config" || !Setters().contains(key))) {
      return Bad("--config " + path + " line " + std::to_string(n) + ": unknown option '" + key.substr(2) + "'");
    }
    if (flag && !value.empty()) {
      return Bad("--config " + path + " line " + std::to_string(n) + ": " + key.substr(2) + " takes no value");
    }
    words.push_back(key);
    if (!flag) words.push_back(value);
  }
  return words;
}

bool SafeName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '-' || name[0] == '.') return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '+' && c != '-') return false;
  }
  return true;
}

std::string Absolute(const std::string& path) {
  if (path.empty()) return path;
  return std::filesystem::absolute(path).lexically_normal().string();
}

// scimesh-launch beside this program (or in the build tree), else the first
// in PATH: the batch script names it by its absolute path.
std::string DefaultLauncher() {
  const std::string beside = launcher::BesideThisProgram("scimesh-launch", "..");
  if (std::filesystem::path(beside).is_absolute()) return beside;
  const char* path = std::getenv("PATH");
  std::string rest = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= rest.size();) {
    const size_t colon = std::min(rest.find(':', start), rest.size());
    const auto candidate = std::filesystem::path(rest.substr(start, colon - start)) / "scimesh-launch";
    if (candidate.is_absolute() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = colon + 1;
  }
  return {};
}

// Defaults that depend on other options or the environment, then checks.
Status Finish(AllocOptions& o) {
  if (o.workflows.empty()) return Bad("give --workflow (the workflows whose demand it serves)");
  if (o.shapes.empty()) return Bad("give --shape (e.g. --shape nodes=1,time=1:00:00)");
  if (o.launch.definitions.empty()) return Bad("give --definitions (the launchers' definitions file)");
  if (o.url.empty()) o.url = std::getenv("SCIMESH_URL") != nullptr ? std::getenv("SCIMESH_URL") : "";
  if (o.url.empty()) o.url = "http://127.0.0.1:8470";
  if (o.name.empty()) {
    for (const auto& w : o.workflows) o.name += (o.name.empty() ? "" : "+") + w;
    if (o.name.size() > 64) o.name.resize(64);
  }
  if (!SafeName(o.name)) {
    return Bad("--name '" + o.name + "': give 1 to 64 letters, digits, . _ + - (not starting with - or .)");
  }
  if (o.state_dir.empty()) {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') return Bad("give --state-dir ($HOME is not set)");
    o.state_dir = std::string(home) + "/.scimesh/alloc/" + o.name;
  }
  if (o.launch.spool.empty()) o.launch.spool = "scimesh-spool";
  if (o.launch.launcher.empty()) o.launch.launcher = DefaultLauncher();
  if (o.launch.launcher.empty()) return Bad("scimesh-launch is not beside this program nor in PATH: give --launcher");
  for (auto* path : {&o.state_dir, &o.launch.spool, &o.launch.definitions, &o.launch.launcher}) *path = Absolute(*path);
  o.launch.events_dir = o.state_dir + "/jobs";
  o.launch.url = o.url;
  const char* token_file = std::getenv("SCIMESH_TOKEN_FILE");
  o.launch.token_file = token_file != nullptr ? Absolute(token_file) : "";
  o.limits.margin_s = o.launch.drain_margin_s;
  if (o.allow_insecure_http) o.launch.launcher_args.push_back("--allow-insecure-http");  // the same consent
  return CheckLaunchSettings(o.launch);
}

}  // namespace

Result<AllocOptions> ParseAllocOptions(int argc, char** argv) {
  AllocOptions o;
  std::vector<std::string> words(argv + 1, argv + argc);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string flag = words[i], value;
    bool has_value = false;
    if (const size_t eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
      value = flag.substr(eq + 1), flag = flag.substr(0, eq), has_value = true;
    }
    if (flag == "-h" || flag == "--help") return o.help = true, o;
    if (flag == "--version") return o.version = true, o;
    if (flag == "-v" || flag == "--verbose") o.verbose = true;
    else if (flag == "--dry-run") o.dry_run = true;
    else if (flag == "--once") o.once = true;
    else if (flag == "--allow-insecure-http") o.allow_insecure_http = true;
    else if (flag == "--config" || Setters().contains(flag)) {
      if (!has_value) {
        if (i + 1 >= words.size()) return Bad(flag + " needs a value");
        value = words[++i];
      }
      if (flag == "--config") {
        auto more = ConfigWords(value);
        if (!more.ok()) return more.status();
        words.insert(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, more->begin(), more->end());
        continue;
      }
      if (Status s = Setters().find(flag)->second(value, o); !s.ok()) return s;
    } else {
      return Bad("unknown option '" + flag + "' (see --help)");
    }
  }
  if (Status s = Finish(o); !s.ok()) return s;
  return o;
}

std::string JobTag(const AllocOptions& options) { return "scimesh-alloc-" + options.name; }

const char* AllocUsage() { return kUsage; }

}  // namespace scimesh::alloc
