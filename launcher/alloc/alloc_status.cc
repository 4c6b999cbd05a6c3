// scimesh-alloc's status.json and the table drawn from it.
#include "launcher/alloc/alloc_status.h"

#include <cstdarg>
#include <cstdio>

#include "protocol/util/json_io.h"

namespace scimesh::alloc {
namespace {

void WriteGroups(JsonWriter& w, const LoopState& state, const LoopSettings& settings) {
  w.Key("groups");
  w.StartArray();
  if (state.demand) {
    for (const auto& g : state.demand->groups) {
      w.StartObject();
      WriteString(w, "step", GroupKey(g));
      WriteInt(w, "runnable", g.runnable);
      WriteInt(w, "backing_off", g.backing_off);
      WriteInt(w, "waiting", g.waiting);
      WriteInt(w, "running", g.running);
      w.Key("held_by_workers");
      if (g.claimable_by_live_workers) w.Int64(*g.claimable_by_live_workers);
      else w.Null();
      WriteString(w, "unfittable", WhyNoShapeFits(settings.shapes, g, settings.limits.margin_s));
      w.EndObject();
    }
  }
  w.EndArray();
}

void WriteJobs(JsonWriter& w, const LoopState& state) {
  w.Key("jobs");
  w.StartArray();
  for (const auto& j : state.jobs) {
    w.StartObject();
    WriteString(w, "job", j.job_id);
    WriteString(w, "state", j.pending ? "pending" : "running");
    WriteInt(w, "nodes", j.nodes);
    WriteInt(w, "time_limit_s", j.time_limit_s);
    WriteInt(w, "running_s", j.running_s);
    w.EndObject();
  }
  w.EndArray();
}

std::string Str(const rapidjson::Value& v, const char* key) {
  return v.HasMember(key) && v[key].IsString() ? v[key].GetString() : "";
}
long long Int(const rapidjson::Value& v, const char* key) {
  return v.HasMember(key) && v[key].IsInt64() ? static_cast<long long>(v[key].GetInt64()) : 0;
}

std::string Row(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Row(const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  return std::string(text) + "\n";
}

}  // namespace

std::string StatusJson(const StatusHeader& h, const LoopState& state, const LoopSettings& settings) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "name", h.name);
    WriteString(w, "url", h.url);
    WriteInt(w, "pid", h.pid);
    WriteString(w, "at", h.at);
    WriteString(w, "line", state.line);
    WriteString(w, "trouble", state.trouble);
    WriteInt(w, "refusals_in_row", state.refusals_in_row);
    WriteString(w, "last_refusal", state.last_refusal);
    WriteInt(w, "paused_s", h.paused_s);
    WriteGroups(w, state, settings);
    WriteJobs(w, state);
  });
}

Result<std::string> StatusTable(std::string_view json, bool running) {
  auto doc = ParseJson(json, "status.json");
  if (!doc.ok()) return doc.status();
  const auto& d = *doc;
  if (!d.IsObject() || !d.HasMember("groups") || !d["groups"].IsArray() || !d.HasMember("jobs") ||
      !d["jobs"].IsArray()) {
    return Status(Code::kInvalidArgument, "status.json is not scimesh-alloc's status");
  }
  std::string out = "scimesh-alloc " + Str(d, "name") + " (" +
                    (running ? "running, pid " + std::to_string(Int(d, "pid")) : std::string("not running")) +
                    "), coordinator " + Str(d, "url") + ", as of " + Str(d, "at") + "\n\n";
  out += Row("%-40s %8s %11s %7s %7s %7s  %s", "STEP", "RUNNABLE", "BACKING_OFF", "WAITING", "RUNNING", "HELD",
             "FITS");
  for (const auto& g : d["groups"].GetArray()) {
    const std::string held = g.HasMember("held_by_workers") && g["held_by_workers"].IsInt64()
                                 ? std::to_string(g["held_by_workers"].GetInt64()) : "?";
    const std::string why = Str(g, "unfittable");
    out += Row("%-40s %8lld %11lld %7lld %7lld %7s  %s", Str(g, "step").c_str(), Int(g, "runnable"),
               Int(g, "backing_off"), Int(g, "waiting"), Int(g, "running"), held.c_str(),
               why.empty() ? "yes" : ("no: " + why).c_str());
  }
  if (d["groups"].Empty()) out += "(no queued steps)\n";
  out += "\n" + Row("%-12s %-8s %5s %11s %11s", "JOB", "STATE", "NODES", "TIME_LIMIT", "RUNNING");
  for (const auto& j : d["jobs"].GetArray()) {
    out += Row("%-12s %-8s %5lld %11s %11s", Str(j, "job").c_str(), Str(j, "state").c_str(), Int(j, "nodes"),
               FormatSlurmTime(Int(j, "time_limit_s")).c_str(), FormatSlurmTime(Int(j, "running_s")).c_str());
  }
  if (d["jobs"].Empty()) out += "(no jobs)\n";
  out += "\nlast decision: " + Str(d, "line") + "\n";
  if (Int(d, "refusals_in_row") > 0) {
    out += "sbatch refusals in a row: " + std::to_string(Int(d, "refusals_in_row")) + ", the last: " +
           Str(d, "last_refusal") + "\n";
  }
  if (Int(d, "paused_s") > 0) out += "paused for " + std::to_string(Int(d, "paused_s")) + " s more\n";
  return out;
}

}  // namespace scimesh::alloc
