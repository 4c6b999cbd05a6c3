// Reading and writing the agent's command and event lines.
#include "launcher/agent/agent_wire.h"

#include <algorithm>
#include <initializer_list>

#include "protocol/util/enum_names.h"
#include "protocol/util/json_io.h"
#include "protocol/util/json_members.h"
#include "protocol/wire/identifiers.h"

namespace scimesh::agent {
namespace {

Status Invalid(std::string message) { return Status::InvalidArgument(std::move(message)); }

// At most 64 bytes of a peer's name for an error message, cut on a UTF-8
// character boundary: the message goes back out as JSON and must stay
// well-formed.
std::string Excerpt(std::string_view s) {
  if (s.size() <= 64) return std::string(s);
  size_t n = 64;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n));
}

// Refuses members other than `known`: a misspelt field is an error, not a
// silently ignored wish.
Status OnlyFields(const rapidjson::Value& v, std::initializer_list<std::string_view> known) {
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    std::string_view name(it->name.GetString(), it->name.GetStringLength());
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Invalid("unknown field '" + Excerpt(name) + "'");
    }
  }
  return Status::Ok();
}

Result<std::string> Id(const JsonObject& o) {
  SCIMESH_ASSIGN_OR_RETURN(std::string id, o.String("id"));
  if (id.empty() || id.size() > kMaxIdBytes) return Invalid("id: must be 1 to 128 bytes");
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) return Invalid("id: only printable ASCII without spaces");
  }
  return id;
}

// An optional absolute path: absent or null is "".
Result<std::string> AbsolutePath(const JsonObject& o, const char* name) {
  SCIMESH_ASSIGN_OR_RETURN(auto path, o.OptString(name));
  if (!path) return std::string();
  if (path->empty() || (*path)[0] != '/' || path->size() > 4096 || path->find('\0') != std::string::npos) {
    return Invalid(std::string(name) + ": must be an absolute path");
  }
  return *path;
}

// An absolute path, or a file name in `cwd` (short lines: see agent_wire.h).
Result<std::string> OutputPath(const JsonObject& o, const char* name, const std::string& cwd) {
  SCIMESH_ASSIGN_OR_RETURN(auto path, o.OptString(name));
  if (path && !path->empty() && (*path)[0] != '/') {
    if (cwd.empty() || path->find('/') != std::string::npos || *path == "." || *path == ".." ||
        path->size() > 255 || path->find('\0') != std::string::npos) {
      return Invalid(std::string(name) + ": must be an absolute path, or a file name in cwd");
    }
    return cwd + "/" + *path;
  }
  return AbsolutePath(o, name);
}

Result<std::vector<std::string>> Argv(const JsonObject& o) {
  SCIMESH_ASSIGN_OR_RETURN(const rapidjson::Value* a, o.Array("argv"));
  if (a->Empty() || a->Size() > kMaxArgs) return Invalid("argv: must hold 1 to 4096 strings");
  std::vector<std::string> argv;
  for (const auto& v : a->GetArray()) {
    if (!v.IsString()) return Invalid("argv: must hold strings only");
    std::string s(v.GetString(), v.GetStringLength());
    if (s.find('\0') != std::string::npos) return Invalid("argv: a string holds a NUL byte");
    argv.push_back(std::move(s));
  }
  if (argv[0].empty()) return Invalid("argv: the program name is empty");
  return argv;
}

Result<std::map<std::string, std::string>> Env(const rapidjson::Value& doc) {
  std::map<std::string, std::string> env;
  auto it = doc.FindMember("env");
  if (it == doc.MemberEnd() || it->value.IsNull()) return env;
  if (!it->value.IsObject()) return Invalid("env: must be an object of strings");
  if (it->value.MemberCount() > kMaxEnv) return Invalid("env: more than 4096 variables");
  for (auto m = it->value.MemberBegin(); m != it->value.MemberEnd(); ++m) {
    std::string key(m->name.GetString(), m->name.GetStringLength());
    if (key.empty() || key.find_first_of(std::string_view("=\0", 2)) != std::string::npos) {
      return Invalid("env: a variable name is empty or holds '=' or NUL");
    }
    if (!m->value.IsString()) return Invalid("env." + Excerpt(key) + ": must be a string");
    std::string value(m->value.GetString(), m->value.GetStringLength());
    if (value.find('\0') != std::string::npos) return Invalid("env." + Excerpt(key) + ": holds a NUL byte");
    env[std::move(key)] = std::move(value);
  }
  return env;
}

Result<std::vector<std::string>> Unset(const rapidjson::Value& doc) {
  std::vector<std::string> names;
  auto it = doc.FindMember("unset");
  if (it == doc.MemberEnd() || it->value.IsNull()) return names;
  if (!it->value.IsArray() || it->value.Size() > kMaxEnv) return Invalid("unset: must be an array of names");
  for (const auto& v : it->value.GetArray()) {
    if (!v.IsString()) return Invalid("unset: must hold strings only");
    std::string name(v.GetString(), v.GetStringLength());
    const size_t star = name.find('*');
    if (name.empty() || name.find_first_of(std::string_view("=\0", 2)) != std::string::npos ||
        (star != std::string::npos && star != name.size() - 1)) {
      return Invalid("unset: each must be a variable name, or a prefix ending in '*'");
    }
    names.push_back(std::move(name));
  }
  return names;
}

Result<std::vector<int>> Cpus(const rapidjson::Value& doc) {
  std::vector<int> cpus;
  auto it = doc.FindMember("cpus");
  if (it == doc.MemberEnd() || it->value.IsNull()) return cpus;
  if (!it->value.IsArray() || it->value.Size() > kMaxCpus) return Invalid("cpus: must be an array of PU indices");
  for (const auto& v : it->value.GetArray()) {
    if (!v.IsInt() || v.GetInt() < 0 || v.GetInt() >= static_cast<int>(kMaxCpus)) {
      return Invalid("cpus: each must be an integer from 0 to 1023");
    }
    cpus.push_back(v.GetInt());
  }
  return cpus;
}

Result<AgentCommand> ParseStart(const rapidjson::Value& doc, const JsonObject& o) {
  SCIMESH_RETURN_IF_ERROR(OnlyFields(doc, {"op", "id", "argv", "unset", "env", "cwd", "stdout", "stderr", "cpus"}));
  AgentStart s;
  SCIMESH_ASSIGN_OR_RETURN(s.id, Id(o));
  SCIMESH_ASSIGN_OR_RETURN(s.argv, Argv(o));
  SCIMESH_ASSIGN_OR_RETURN(s.unset, Unset(doc));
  SCIMESH_ASSIGN_OR_RETURN(s.env, Env(doc));
  SCIMESH_ASSIGN_OR_RETURN(s.cwd, AbsolutePath(o, "cwd"));
  SCIMESH_ASSIGN_OR_RETURN(s.stdout_path, OutputPath(o, "stdout", s.cwd));
  SCIMESH_ASSIGN_OR_RETURN(s.stderr_path, OutputPath(o, "stderr", s.cwd));
  SCIMESH_ASSIGN_OR_RETURN(s.cpus, Cpus(doc));
  return AgentCommand(std::move(s));
}

void WriteStrings(JsonWriter& w, const char* key, const std::vector<std::string>& values) {
  w.Key(key);
  w.StartArray();
  for (const auto& v : values) w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  w.EndArray();
}

void WriteOptString(JsonWriter& w, std::string_view key, const std::string& value) {
  if (!value.empty()) WriteString(w, key, value);
}

using K = AgentEvent::Kind;
constexpr EnumNames<K, 6> kEventNames{{{K::kReady, "ready"},
                                       {K::kStarted, "started"},
                                       {K::kFailed, "failed"},
                                       {K::kExited, "exited"},
                                       {K::kPong, "pong"},
                                       {K::kError, "error"}}};

// The members of each kind of event after its `ev`.
constexpr auto kEventMembers = [](auto& m, auto& e) {
  switch (e.kind) {
    case K::kReady:
      m.String("host", e.host);
      m.IntIn("pid", e.pid, 1, INT32_MAX);
      m.String("version", e.version);
      break;
    case K::kStarted:
      m.String("id", e.id);
      m.IntIn("pid", e.pid, 1, INT32_MAX);
      break;
    case K::kFailed:
      m.String("id", e.id);
      m.String("error", e.error);
      break;
    case K::kExited:
      m.String("id", e.id);
      m.IntIn("pid", e.pid, 1, INT32_MAX);
      m.Bool("signaled", e.signaled);
      m.IntIn("code", e.code, 0, 255);
      m.IntInOr("memory_limit_mib", e.memory_limit_mib, -1, int64_t{1} << 40, 0, Unset::kOmit);
      break;
    case K::kPong:
      break;
    case K::kError:
      m.StringOrEmpty("id", e.id, 0, SIZE_MAX);
      m.String("error", e.error);
      break;
  }
};

}  // namespace

std::string_view EventName(AgentEvent::Kind kind) { return NameOf(kEventNames, kind); }

Result<AgentCommand> ParseAgentCommand(std::string_view line) {
  SCIMESH_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(line, "command"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  SCIMESH_ASSIGN_OR_RETURN(std::string op, o.String("op"));
  if (op == "start") return ParseStart(doc, o);
  if (op == "signal") {
    SCIMESH_RETURN_IF_ERROR(OnlyFields(doc, {"op", "id", "signal"}));
    AgentSignal s;
    SCIMESH_ASSIGN_OR_RETURN(s.id, Id(o));
    SCIMESH_ASSIGN_OR_RETURN(int64_t sig, o.IntIn("signal", 1, 64));
    s.signal = static_cast<int>(sig);
    return AgentCommand(std::move(s));
  }
  if (op == "stop") {
    SCIMESH_RETURN_IF_ERROR(OnlyFields(doc, {"op", "id", "grace_ms"}));
    AgentStop s;
    SCIMESH_ASSIGN_OR_RETURN(s.id, Id(o));
    SCIMESH_ASSIGN_OR_RETURN(s.grace_ms, o.IntIn("grace_ms", 0, kMaxGraceMs));
    return AgentCommand(std::move(s));
  }
  if (op == "ping") {
    SCIMESH_RETURN_IF_ERROR(OnlyFields(doc, {"op"}));
    return AgentCommand(AgentPing{});
  }
  return Invalid("unknown op '" + Excerpt(op) + "'");
}

std::string AgentCommandLine(const AgentCommand& command) {
  return ObjectText([&](JsonWriter& w) {
    if (const auto* s = std::get_if<AgentStart>(&command)) {
      WriteString(w, "op", "start");
      WriteString(w, "id", s->id);
      WriteStrings(w, "argv", s->argv);
      if (!s->unset.empty()) WriteStrings(w, "unset", s->unset);
      WriteObject(w, "env", [&](JsonWriter& ew) {
        for (const auto& [k, v] : s->env) WriteString(ew, k, v);
      });
      WriteOptString(w, "cwd", s->cwd);
      WriteOptString(w, "stdout", s->stdout_path);
      WriteOptString(w, "stderr", s->stderr_path);
      w.Key("cpus");
      w.StartArray();
      for (int c : s->cpus) w.Int(c);
      w.EndArray();
    } else if (const auto* g = std::get_if<AgentSignal>(&command)) {
      WriteString(w, "op", "signal");
      WriteString(w, "id", g->id);
      WriteInt(w, "signal", g->signal);
    } else if (const auto* t = std::get_if<AgentStop>(&command)) {
      WriteString(w, "op", "stop");
      WriteString(w, "id", t->id);
      WriteInt(w, "grace_ms", t->grace_ms);
    } else {
      WriteString(w, "op", "ping");
    }
  }) + "\n";
}

Result<AgentEvent> ParseAgentEvent(std::string_view line) {
  SCIMESH_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(line, "agent event"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, "agent event"));
  SCIMESH_ASSIGN_OR_RETURN(std::string ev, o.String("ev"));
  auto kind = ValueOf(kEventNames, ev);
  if (!kind) return Invalid("agent event: unknown ev '" + Excerpt(ev) + "'");
  AgentEvent e;
  e.kind = *kind;
  MemberReader reader(o);
  kEventMembers(reader, e);
  if (!reader.status().ok()) return reader.status();
  return e;
}

std::string AgentEventLine(const AgentEvent& e) {
  return ObjectText([&](JsonWriter& w) {
           WriteString(w, "ev", EventName(e.kind));
           MemberWriter writer(w);
           kEventMembers(writer, e);
         }) +
         "\n";
}

// The shape of a SHA-256 digest on the wire: protocol/identifiers.h checks it.
bool IsDirectSecret(std::string_view s) { return CheckSha256(s, "secret").ok(); }

}  // namespace scimesh::agent
