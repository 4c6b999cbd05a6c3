// The run client: argument parsing, and the run API through protocol/'s
// Client (the launcher's HTTP, token and transport rules, one copy).
#include "coordinator/run_command.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "coordinator/cli.h"
#include "coordinator/run_view_text.h"
#include "coordinator/run_watch.h"
#include "protocol/client/client.h"
#include "protocol/util/json_io.h"
#include "protocol/util/log.h"
#include "protocol/util/token.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"

namespace scimesh::coordinator {
namespace {

constexpr int kExitRefused = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;

// How long a person's command keeps retrying an unreachable coordinator.
// `start` is tried once: a retried POST whose first copy arrived would start
// a second run. `watch` retries in its own loop (run_watch.h), which says so
// as soon as a poll fails and rides out a restart for WatchOptions::budget.
constexpr Millis kCallBudget{5000};
constexpr Millis kWatchConnectTimeout{2000};
constexpr Millis kWatchCallTimeout{10000};

struct RunArgs {
  std::string verb;
  std::string run_id;
  std::map<std::string, std::string> flags;
  bool json = false;
  bool help = false;
};

bool ParseArgs(const std::vector<std::string>& args, RunArgs& out, std::string* why) {
  if (args.empty()) {
    *why = "missing subcommand";
    return false;
  }
  out.verb = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      out.json = true;
    } else if (a == "--help" || a == "-h") {
      out.help = true;
    } else if (a.rfind("--", 0) == 0) {
      auto [name, value] = TakeFlag(args, i);
      if (!value) {
        *why = "--" + name + " needs a value";
        return false;
      }
      out.flags[name] = *value;
    } else if (out.run_id.empty()) {
      out.run_id = a;
    } else {
      *why = "unexpected argument '" + a + "'";
      return false;
    }
  }
  return true;
}

// Reads a JSON argument: the text itself, or @file. Compact JSON text.
std::optional<std::string> JsonArg(const std::string& value, const char* flag, std::string* why) {
  std::string text = value;
  if (!text.empty() && text[0] == '@') {
    std::ifstream in(text.substr(1));
    if (!in) {
      *why = std::string(flag) + ": cannot read " + text.substr(1);
      return std::nullopt;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  auto json = CanonicalJson(text, flag);
  if (!json.ok()) {
    *why = json.status().message();
    return std::nullopt;
  }
  return *json;
}

bool EnvIs(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == value;
}

// What a failed call means for the exit status, said once: what failed,
// where (the coordinator's URL) and why (the coordinator's answer or curl's).
int Failed(const std::string& verb, const Client& client, const Status& s) {
  // Transport errors name the coordinator already (scheme://host:port):
  // the URL is said once.
  const Url& url = client.coordinator();
  const std::string origin = url.scheme + "://" + url.host + ":" + std::to_string(url.port);
  std::cerr << "scimesh-coordinator run " << verb << ": ";
  if (s.message().find(origin) == std::string::npos) std::cerr << url.text << ": ";
  std::cerr << s.message() << "\n";
  return s.code() == Code::kUnavailable || s.code() == Code::kTimeout ? kExitUnreachable : kExitRefused;
}

int Start(RunArgs& a, Client& client) {
  std::string why;
  if (!a.flags.count("workflow") || !a.flags.count("input")) {
    std::cerr << "scimesh-coordinator run start: --workflow and --input are required\n";
    return kExitUsage;
  }
  RunCreateRequest request;
  request.workflow = a.flags["workflow"];
  if (a.flags.count("version")) request.version = a.flags["version"];
  auto input = JsonArg(a.flags["input"], "--input", &why);
  if (input && a.flags.count("correlation")) request.correlation_json = JsonArg(a.flags["correlation"], "--correlation", &why);
  if (!input || (a.flags.count("correlation") && !request.correlation_json)) {
    std::cerr << "scimesh-coordinator run start: " << why << "\n";
    return kExitUsage;
  }
  request.input_json = *input;
  if (a.flags.count("deadline-s")) {
    char* end = nullptr;
    long long n = std::strtoll(a.flags["deadline-s"].c_str(), &end, 10);
    if (end == nullptr || *end != '\0' || n <= 0) {
      std::cerr << "scimesh-coordinator run start: --deadline-s must be a positive integer\n";
      return kExitUsage;
    }
    request.deadline_s = n;
  }
  auto created = client.StartRun(request);
  if (!created.ok()) return Failed("start", client, created.status());
  std::cout << created->run_id << std::endl;
  return 0;
}

int Show(const RunArgs& a, Client& client) {
  auto run = client.ShowRun(a.run_id);
  if (!run.ok()) return Failed("show", client, run.status());
  if (a.json) {
    std::cout << SerializeRunView(*run) << std::endl;
  } else {
    PrintRunView(*run, std::cout);
  }
  return 0;
}

int Watch(Client& client, const std::string& run_id) {
  auto completed = WatchRun(client, run_id, WatchOptions{}, std::cout, std::cerr);
  if (!completed.ok()) return Failed("watch", client, completed.status());
  return *completed ? 0 : kExitRefused;
}

// --workflow, --state and --limit, checked here so a mistake is a usage error.
std::optional<RunListQuery> ListQuery(RunArgs& a, std::string* why) {
  RunListQuery q;
  if (a.flags.count("workflow")) {
    if (Status s = CheckIdentifier(a.flags["workflow"], "--workflow"); !s.ok()) {
      *why = s.message();
      return std::nullopt;
    }
    q.workflow = a.flags["workflow"];
  }
  if (a.flags.count("state")) {
    if (!ParseRunState(a.flags["state"])) {
      *why = "--state must be running, completed, failed, timed_out or cancelled";
      return std::nullopt;
    }
    q.state = a.flags["state"];
  }
  if (a.flags.count("limit")) {
    char* end = nullptr;
    long long n = std::strtoll(a.flags["limit"].c_str(), &end, 10);
    if (end == nullptr || *end != '\0' || a.flags["limit"].empty() || n < 1 || n > kMaxRunList) {
      *why = "--limit must be an integer from 1 to " + std::to_string(kMaxRunList);
      return std::nullopt;
    }
    q.limit = n;
  }
  return q;
}

int List(RunArgs& a, Client& client) {
  std::string why;
  if (!a.run_id.empty()) why = "takes no RUN_ID";
  auto query = why.empty() ? ListQuery(a, &why) : std::nullopt;
  if (!query) {
    std::cerr << "scimesh-coordinator run list: " << why << "\n";
    return kExitUsage;
  }
  auto list = client.ListRuns(*query);
  if (!list.ok()) return Failed("list", client, list.status());
  if (a.json) {
    std::cout << SerializeRunList(*list) << std::endl;
    return 0;
  }
  PrintRunList(*list, std::cout);
  if (list->runs.empty()) std::cerr << "scimesh-coordinator run list: no runs match\n";
  if (list->more) {
    std::cerr << "scimesh-coordinator run list: more runs match than the " << query->limit
              << " shown (--limit, at most " << kMaxRunList << ")\n";
  }
  return 0;
}

}  // namespace

std::string RunUsage() {
  return R"usage(Usage: scimesh-coordinator run start --workflow W [--version V] --input JSON|@file
                                     [--correlation JSON|@file] [--deadline-s N]
       scimesh-coordinator run list [--workflow W] [--state S] [--limit N] [--json]
       scimesh-coordinator run show RUN_ID [--json]
       scimesh-coordinator run watch RUN_ID
       scimesh-coordinator run cancel RUN_ID

  start    starts a run and prints its run id (and nothing else) on stdout
  list     prints the newest runs of this key (a read or admin key: of every key), one a line:
           id, workflow@version, status, times; --state S: running, completed, failed,
           timed_out or cancelled; --limit N: at most N (1-200, default 20)
  show     prints the run: status and why it ended, every step (why it failed or was cancelled)
           and every attempt: status, error, its directory (HOST:<spool>/RUN/STEP/N, <spool>
           being the launcher's spool), last progress, usage (--json: as the API returns it)
  watch    prints the run's journal as it grows, each running attempt's progress as it
           changes and any step no worker can fit, until the run ends; when a poll fails
           (no connection in 2 s, no answer in 10 s) says on stderr at once that it cannot
           reach the coordinator and retries, giving up after 60 s; exit 0 iff it completed
  cancel   cancels the run (a finished run is left as it is) and prints its status

Every subcommand takes --url URL (default $SCIMESH_URL or http://127.0.0.1:8470).
The key (scope execute, or read for list, show and watch) comes from $SCIMESH_TOKEN_FILE
or $SCIMESH_TOKEN, never argv.
Plain http only to loopback, unless SCIMESH_ALLOW_INSECURE_HTTP=1.
Exit status: 0 success, 1 refused (or, for watch, the run did not complete),
2 usage, 3 the coordinator could not be reached.
)usage";
}

int RunRunCommand(const std::vector<std::string>& args) {
  RunArgs a;
  std::string why;
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << RunUsage();
    return 0;
  }
  if (!ParseArgs(args, a, &why)) {
    std::cerr << "scimesh-coordinator run: " << why << "\n\n" << RunUsage();
    return kExitUsage;
  }
  if (a.help) {
    std::cout << RunUsage();
    return 0;
  }
  for (const auto& flag : a.flags) {
    const std::string& name = flag.first;  // a named variable: clang 14 cannot capture a binding
    static const char* kAllowed[] = {"url",        "workflow", "version", "input",
                                     "correlation", "deadline-s", "state",  "limit"};
    if (std::find_if(std::begin(kAllowed), std::end(kAllowed), [&](const char* n) { return name == n; }) ==
        std::end(kAllowed)) {
      std::cerr << "scimesh-coordinator run: unknown flag --" << name << "\n";
      return kExitUsage;
    }
  }
  static const char* kVerbs[] = {"start", "list", "show", "watch", "cancel"};
  if (std::find(std::begin(kVerbs), std::end(kVerbs), a.verb) == std::end(kVerbs)) {
    std::cerr << "scimesh-coordinator run: unknown subcommand '" << a.verb << "'\n\n" << RunUsage();
    return kExitUsage;
  }
  if (a.verb != "start" && a.verb != "list" && a.run_id.empty()) {
    std::cerr << "scimesh-coordinator run " << a.verb << ": RUN_ID is required\n";
    return kExitUsage;
  }
  // The launcher's rules, by the same code: the key from a private (0600)
  // file or the environment; https, or plain http only to loopback unless
  // SCIMESH_ALLOW_INSECURE_HTTP=1 (checked by Client::Create).
  ClientOptions options;
  options.coordinator_url = a.flags.count("url") ? a.flags["url"] : "";
  if (options.coordinator_url.empty()) {
    const char* env = std::getenv("SCIMESH_URL");
    options.coordinator_url = env != nullptr && *env != '\0' ? env : "http://127.0.0.1:8470";
  }
  auto token = LoadTokenFromEnvironment();
  if (!token.ok()) {
    std::cerr << "scimesh-coordinator run: " << token.status().message() << "\n";
    return kExitUsage;
  }
  options.token = *token;
  options.allow_insecure_http = EnvIs("SCIMESH_ALLOW_INSECURE_HTTP", "1");
  options.retry_budget = a.verb == "watch" || a.verb == "start" ? Millis(0) : kCallBudget;
  if (a.verb == "watch") {
    // Each poll is tried once and the watch loop says at once when it
    // failed; a connect or an answer that does not come is a failed poll.
    options.connect_timeout = kWatchConnectTimeout;
    options.call_timeout = kWatchCallTimeout;
  }
  // The client's per-try warnings are for daemons; a person gets one line.
  log::SetLevel(spdlog::level::err);
  auto client = Client::Create(std::move(options));
  if (!client.ok()) {
    std::cerr << "scimesh-coordinator run: " << client.status().message() << "\n";
    return kExitUsage;
  }
  Client& c = **client;
  if (a.verb == "start") return Start(a, c);
  if (a.verb == "list") return List(a, c);
  if (a.verb == "watch") return Watch(c, a.run_id);
  if (a.verb == "show") return Show(a, c);
  auto cancelled = c.CancelRun(a.run_id);
  if (!cancelled.ok()) return Failed("cancel", c, cancelled.status());
  std::cout << "run " << cancelled->run_id << ": " << cancelled->status << std::endl;
  return 0;
}

}  // namespace scimesh::coordinator
