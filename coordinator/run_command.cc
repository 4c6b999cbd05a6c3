// The run client: argument parsing, HTTP calls, human-readable output.
#include "coordinator/run_command.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <rapidjson/document.h>

#include "coordinator/json_text.h"
#include "protocol/token.h"
#include "protocol/url.h"

namespace scimesh::coordinator {
namespace {

constexpr int kExitRefused = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;

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
      std::string name = a.substr(2), value;
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        *why = "--" + name + " needs a value";
        return false;
      }
      out.flags[name] = value;
    } else if (out.run_id.empty()) {
      out.run_id = a;
    } else {
      *why = "unexpected argument '" + a + "'";
      return false;
    }
  }
  return true;
}

// Reads a JSON argument: the text itself, or @file.
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
  rapidjson::Document doc;
  if (doc.Parse(text.c_str()).HasParseError()) {
    *why = std::string(flag) + ": not valid JSON";
    return std::nullopt;
  }
  return CompactJson(doc);
}

std::string Field(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return "";
  auto it = v.FindMember(name);
  if (it == v.MemberEnd()) return "";
  if (it->value.IsString()) return it->value.GetString();
  if (it->value.IsNull()) return "-";
  return CompactJson(it->value);
}

class RunClient {
 public:
  RunClient(const std::string& url, const std::string& token) : cli_(url) {
    cli_.set_bearer_token_auth(token.c_str());
    cli_.set_connection_timeout(std::chrono::seconds(5));
    cli_.set_read_timeout(std::chrono::seconds(30));
    cli_.set_follow_location(false);
    cli_.set_tcp_nodelay(true);
  }

  bool valid() const { return cli_.is_valid(); }

  // 0 and the body; or prints the error and returns the exit status.
  int Call(const std::string& method, const std::string& path, const std::string& body, std::string* out,
           int expect) {
    httplib::Result res = method == "GET" ? cli_.Get(path.c_str())
                                          : cli_.Post(path.c_str(), body, "application/json");
    if (!res) {
      std::cerr << "cannot reach the coordinator: " << httplib::to_string(res.error()) << "\n";
      return kExitUnreachable;
    }
    if (res->status != expect && !(expect == 200 && res->status == 201)) {
      rapidjson::Document err;
      err.Parse(res->body.c_str());
      std::cerr << "HTTP " << res->status;
      if (!err.HasParseError() && err.IsObject()) {
        std::cerr << " " << Field(err, "error");
        if (!Field(err, "field").empty()) std::cerr << " (" << Field(err, "field") << ")";
        std::cerr << ": " << Field(err, "message");
      }
      std::cerr << "\n";
      return kExitRefused;
    }
    *out = res->body;
    return 0;
  }

 private:
  httplib::Client cli_;
};

void PrintRun(const rapidjson::Document& run) {
  std::cout << "run " << Field(run, "run_id") << "  " << Field(run, "workflow") << "@" << Field(run, "version")
            << "  " << Field(run, "status") << "\n";
  std::cout << "  created " << Field(run, "created_at") << "  deadline " << Field(run, "deadline_at")
            << "  finished " << Field(run, "finished_at") << "\n";
  if (!run.HasMember("steps") || !run["steps"].IsArray()) return;
  for (const auto& s : run["steps"].GetArray()) {
    std::cout << "  step " << Field(s, "step_id") << "  " << Field(s, "status");
    if (s.HasMember("attempts") && s["attempts"].IsArray() && !s["attempts"].Empty()) {
      const auto& last = s["attempts"][s["attempts"].Size() - 1];
      std::cout << "  attempts " << s["attempts"].Size() << "  last #" << Field(last, "attempt") << " by "
                << Field(last, "worker_id") << " " << Field(last, "status");
      if (last.HasMember("error") && last["error"].IsObject()) {
        std::cout << " (" << Field(last["error"], "class") << ": " << Field(last["error"], "message") << ")";
      }
    }
    std::cout << "\n";
    // What each attempt reported: its last heartbeated progress, the usage it completed with.
    if (!s.HasMember("attempts") || !s["attempts"].IsArray()) continue;
    for (const auto& a : s["attempts"].GetArray()) {
      const std::string progress = Field(a, "progress"), usage = Field(a, "usage");
      const bool has_progress = !progress.empty() && progress != "-";
      const bool has_usage = !usage.empty() && usage != "-";
      if (!has_progress && !has_usage) continue;
      std::cout << "    #" << Field(a, "attempt");
      if (has_progress) std::cout << "  progress " << progress;
      if (has_usage) std::cout << "  usage " << usage;
      std::cout << "\n";
    }
  }
}

void PrintEvent(const rapidjson::Value& e) {
  std::cout << Field(e, "at") << "  " << Field(e, "type");
  if (Field(e, "step_id") != "-") std::cout << "  step " << Field(e, "step_id") << " #" << Field(e, "attempt");
  if (Field(e, "worker_id") != "-") std::cout << "  worker " << Field(e, "worker_id");
  std::string detail = Field(e, "detail");
  if (!detail.empty() && detail != "{}") std::cout << "  " << detail;
  std::cout << std::endl;
}

int Watch(RunClient& client, const std::string& run_id) {
  int64_t printed = 0;
  auto last_ok = std::chrono::steady_clock::now();
  for (;;) {
    std::string body;
    int rc = client.Call("GET", "/v1/api/runs/" + run_id + "/journal", "", &body, 200);
    if (rc == kExitUnreachable && std::chrono::steady_clock::now() - last_ok < std::chrono::seconds(60)) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (rc != 0) return rc;
    last_ok = std::chrono::steady_clock::now();
    rapidjson::Document journal;
    journal.Parse(body.c_str());
    if (journal.HasParseError() || !journal.HasMember("events") || !journal["events"].IsArray()) return kExitRefused;
    std::string terminal;
    for (const auto& e : journal["events"].GetArray()) {
      if (!e.HasMember("seq") || !e["seq"].IsInt64() || e["seq"].GetInt64() <= printed) continue;
      PrintEvent(e);
      printed = e["seq"].GetInt64();
    }
    for (const auto& e : journal["events"].GetArray()) {
      std::string type = Field(e, "type");
      if (type == "run_completed" || type == "run_failed" || type == "run_timed_out" || type == "run_cancelled") {
        terminal = type.substr(4);
      }
    }
    if (!terminal.empty()) {
      std::cout << "run " << run_id << ": " << terminal << std::endl;
      return terminal == "completed" ? 0 : kExitRefused;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

std::string RunUsage() {
  return R"usage(Usage: scimesh-coordinator run start --workflow W [--version V] --input JSON|@file
                                     [--correlation JSON|@file] [--deadline-s N]
       scimesh-coordinator run show RUN_ID [--json]
       scimesh-coordinator run watch RUN_ID
       scimesh-coordinator run cancel RUN_ID

  start    starts a run and prints its run id (and nothing else) on stdout
  show     prints the run: status, every step and its last attempt, what each attempt reported
           (last progress, usage) (--json: as the API returns it)
  watch    prints the run's journal as it grows until the run ends; exit 0 iff it completed
  cancel   cancels the run (a finished run is left as it is) and prints its status

Every subcommand takes --url URL (default $SCIMESH_URL or http://127.0.0.1:8470).
The key (scope execute) comes from $SCIMESH_TOKEN_FILE or $SCIMESH_TOKEN, never argv.
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
    static const char* kAllowed[] = {"url", "workflow", "version", "input", "correlation", "deadline-s"};
    if (std::find_if(std::begin(kAllowed), std::end(kAllowed), [&](const char* n) { return name == n; }) ==
        std::end(kAllowed)) {
      std::cerr << "scimesh-coordinator run: unknown flag --" << name << "\n";
      return kExitUsage;
    }
  }
  std::string url = a.flags.count("url") ? a.flags["url"] : "";
  if (url.empty()) url = std::getenv("SCIMESH_URL") != nullptr ? std::getenv("SCIMESH_URL") : "http://127.0.0.1:8470";
  // The client's rules: a token file must be private (0600), and the secret
  // is registered with the log redactor.
  auto token = LoadTokenFromEnvironment();
  if (!token.ok()) {
    std::cerr << "scimesh-coordinator run: " << token.status().message() << "\n";
    return kExitUsage;
  }
  // The client's transport policy: https, or plain http only to loopback
  // unless SCIMESH_ALLOW_INSECURE_HTTP=1 (the key must not cross a network
  // in clear text by accident).
  auto parsed = ParseUrl(url);
  if (!parsed.ok()) {
    std::cerr << "scimesh-coordinator run: --url: " << parsed.status().message() << "\n";
    return kExitUsage;
  }
  const char* insecure = std::getenv("SCIMESH_ALLOW_INSECURE_HTTP");
  if (Status s = CheckTransportPolicy(*parsed, insecure != nullptr && std::string(insecure) == "1"); !s.ok()) {
    std::cerr << "scimesh-coordinator run: " << s.message() << "\n";
    return kExitUsage;
  }
  RunClient client(url, token->secret());
  if (!client.valid()) {
    std::cerr << "scimesh-coordinator run: --url must look like http(s)://HOST:PORT\n";
    return kExitUsage;
  }
  std::string body;
  if (a.verb == "start") {
    if (!a.flags.count("workflow") || !a.flags.count("input")) {
      std::cerr << "scimesh-coordinator run start: --workflow and --input are required\n";
      return kExitUsage;
    }
    auto input = JsonArg(a.flags["input"], "--input", &why);
    std::optional<std::string> correlation;
    if (input && a.flags.count("correlation")) correlation = JsonArg(a.flags["correlation"], "--correlation", &why);
    if (!input || (a.flags.count("correlation") && !correlation)) {
      std::cerr << "scimesh-coordinator run start: " << why << "\n";
      return kExitUsage;
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("workflow");
    WriteString(w, a.flags["workflow"]);
    if (a.flags.count("version")) {
      w.Key("version");
      WriteString(w, a.flags["version"]);
    }
    w.Key("input");
    WriteRaw(w, *input);
    if (correlation) {
      w.Key("correlation");
      WriteRaw(w, *correlation);
    }
    if (a.flags.count("deadline-s")) {
      char* end = nullptr;
      long long n = std::strtoll(a.flags["deadline-s"].c_str(), &end, 10);
      if (end == nullptr || *end != '\0' || n <= 0) {
        std::cerr << "scimesh-coordinator run start: --deadline-s must be a positive integer\n";
        return kExitUsage;
      }
      w.Key("deadline_s");
      w.Int64(n);
    }
    w.EndObject();
    int rc = client.Call("POST", "/v1/api/runs", buf.GetString(), &body, 201);
    if (rc != 0) return rc;
    rapidjson::Document created;
    created.Parse(body.c_str());
    std::cout << Field(created, "run_id") << std::endl;
    return 0;
  }
  if (a.run_id.empty()) {
    std::cerr << "scimesh-coordinator run " << a.verb << ": RUN_ID is required\n";
    return kExitUsage;
  }
  if (a.verb == "show") {
    int rc = client.Call("GET", "/v1/api/runs/" + a.run_id, "", &body, 200);
    if (rc != 0) return rc;
    if (a.json) {
      std::cout << body << std::endl;
    } else {
      rapidjson::Document run;
      run.Parse(body.c_str());
      PrintRun(run);
    }
    return 0;
  }
  if (a.verb == "watch") return Watch(client, a.run_id);
  if (a.verb == "cancel") {
    int rc = client.Call("POST", "/v1/api/runs/" + a.run_id + "/cancel", "", &body, 200);
    if (rc != 0) return rc;
    rapidjson::Document reply;
    reply.Parse(body.c_str());
    std::cout << "run " << Field(reply, "run_id") << ": " << Field(reply, "status") << std::endl;
    return 0;
  }
  std::cerr << "scimesh-coordinator run: unknown subcommand '" << a.verb << "'\n\n" << RunUsage();
  return kExitUsage;
}

}  // namespace scimesh::coordinator
