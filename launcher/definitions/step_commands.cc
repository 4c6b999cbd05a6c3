// Parsing the launcher's definitions file.
#include "launcher/definitions/step_commands.h"

#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "launcher/definitions/definitions_fields.h"
#include "protocol/util/json_io.h"
#include "protocol/wire/wire_json.h"

namespace scimesh::launcher {
namespace {

// The fields every command of a step has: argv, env, shell. `path` names the
// object ("workflows[0].steps[1].run", "...run.setup").
Status ParseCommandFields(const rapidjson::Value& run, const std::string& path, const std::string& base_dir,
                          std::vector<std::string>& argv_out, std::map<std::string, std::string>& env_out,
                          bool& shell_out) {
  if (!run.IsObject()) return Status::InvalidArgument(path + ": must be an object");
  auto argv = run.FindMember("argv");
  if (argv == run.MemberEnd() || !argv->value.IsArray() || argv->value.Empty()) {
    return Status::InvalidArgument(path + ".argv: must be a non-empty array of strings");
  }
  for (const auto& a : argv->value.GetArray()) {
    if (!a.IsString()) return Status::InvalidArgument(path + ".argv: must hold only strings");
    argv_out.emplace_back(a.GetString(), a.GetStringLength());
  }
  if (auto env = run.FindMember("env"); env != run.MemberEnd()) {
    if (!env->value.IsObject()) return Status::InvalidArgument(path + ".env: must be an object of strings");
    for (const auto& kv : env->value.GetObject()) {
      if (!kv.value.IsString()) return Status::InvalidArgument(path + ".env: values must be strings");
      env_out[kv.name.GetString()] = kv.value.GetString();
    }
  }
  if (auto m = run.FindMember("shell"); m != run.MemberEnd()) {
    if (!m->value.IsBool()) return Status::InvalidArgument(path + ".shell: must be true or false");
    shell_out = m->value.GetBool();
  }
  // "./solver" or "bin/solver" means beside the definitions file; "solver" is looked up in PATH.
  std::string& program = argv_out.front();
  if (!shell_out && program.find('/') != std::string::npos && program.front() != '/') {
    program = (std::filesystem::path(base_dir) / program).lexically_normal().string();
  }
  return Status::Ok();
}

Result<std::optional<StepPartCommand>> ParsePart(const rapidjson::Value& run, const char* name,
                                                 const std::string& path, const std::string& base_dir) {
  auto m = run.FindMember(name);
  if (m == run.MemberEnd()) return std::optional<StepPartCommand>();
  StepPartCommand part;
  if (Status s = ParseCommandFields(m->value, path + "." + name, base_dir, part.argv, part.env, part.shell); !s.ok()) {
    return s;
  }
  return std::optional<StepPartCommand>(std::move(part));
}

Result<StepCommand> ParseRun(const rapidjson::Value& run, const std::string& where, const std::string& base_dir) {
  const std::string path = where + ".run";
  StepCommand c;
  if (Status s = ParseCommandFields(run, path, base_dir, c.argv, c.env, c.shell); !s.ok()) return s;
  if (auto m = run.FindMember("native"); m != run.MemberEnd()) {
    if (!m->value.IsBool()) return Status::InvalidArgument(path + ".native: must be true or false");
    c.native = m->value.GetBool();
  }
  if (auto mpi = run.FindMember("mpi"); mpi != run.MemberEnd()) {
    if (!mpi->value.IsString()) return Status::InvalidArgument(path + ".mpi: must be a string");
    c.mpi = mpi->value.GetString();
  }
  SCIMESH_ASSIGN_OR_RETURN(c.setup, ParsePart(run, "setup", path, base_dir));
  SCIMESH_ASSIGN_OR_RETURN(c.finish, ParsePart(run, "finish", path, base_dir));
  return c;
}

// The typed parser names a workflow "definitions[i]" (its place in the
// register call); the user's file calls it "workflows[i]", or nothing when
// the file is one workflow object.
Status InFileTerms(const Status& s, bool one_workflow) {
  std::string message = s.message();
  if (one_workflow && message.rfind("definitions[0].", 0) == 0) {
    message.erase(0, std::string_view("definitions[0].").size());
  } else if (message.rfind("definitions[", 0) == 0) {
    message.replace(0, std::string_view("definitions").size(), "workflows");
  }
  return Status::InvalidArgument("definitions file: " + message);
}

}  // namespace

Result<StepCommands> StepCommands::Parse(std::string_view json, const std::string& base_dir) {
  std::optional<JsonSyntaxError> syntax;
  auto file = ParseJson(json, "definitions file", JsonLimits{}, &syntax);
  if (!file.ok() && syntax) {
    return Status::InvalidArgument("definitions file: invalid JSON at " + LineAndColumn(json, syntax->offset) + ": " +
                                   syntax->reason);
  }
  if (!file.ok()) return Status::InvalidArgument(file.status().message());
  rapidjson::Document doc = std::move(*file);
  if (!doc.IsObject()) return Status::InvalidArgument("definitions file: must be a JSON object");
  if (Status s = CheckKnownFields(doc); !s.ok()) return Status::InvalidArgument("definitions file: " + s.message());

  // Keep the protocol's own checks: strip each step's "run", then parse the
  // rest exactly as the coordinator will receive it.
  rapidjson::Value workflows(rapidjson::kArrayType);
  auto& alloc = doc.GetAllocator();
  const rapidjson::Value& root = doc;  // const iterators: comparable without C++20 ambiguity
  bool one_workflow = false;  // paths then start at the workflow's own fields
  if (auto w = root.FindMember("workflows"); w != root.MemberEnd()) {
    if (!w->value.IsArray()) return Status::InvalidArgument("definitions file: 'workflows' must be an array");
    workflows.CopyFrom(w->value, alloc);
  } else {
    workflows.PushBack(rapidjson::Value(doc, alloc), alloc);
    one_workflow = true;
  }

  StepCommands out;
  std::vector<std::tuple<std::string, std::string, std::string, StepCommand>> commands;
  for (rapidjson::SizeType i = 0; i < workflows.Size(); ++i) {
    auto& wf = workflows[i];
    const std::string where = one_workflow ? "" : "workflows[" + std::to_string(i) + "]";
    if (!wf.IsObject() || !wf.HasMember("steps") || !wf["steps"].IsArray()) {
      return Status::InvalidArgument("definitions file: " + (one_workflow ? std::string("the workflow") : where) +
                                     ": needs 'workflow', 'version' and a 'steps' array");
    }
    for (rapidjson::SizeType j = 0; j < wf["steps"].Size(); ++j) {
      auto& step = wf["steps"][j];
      const std::string at = (one_workflow ? "" : where + ".") + "steps[" + std::to_string(j) + "]";
      if (!step.IsObject()) return Status::InvalidArgument("definitions file: " + at + ": must be an object");
      auto run = std::as_const(step).FindMember("run");
      if (run == std::as_const(step).MemberEnd())
        return Status::InvalidArgument("definitions file: " + at + ": no 'run' (the command to start)");
      auto cmd = ParseRun(run->value, at, base_dir);
      if (!cmd.ok()) return Status::InvalidArgument("definitions file: " + cmd.status().message());
      std::string id = step.HasMember("id") && step["id"].IsString() ? step["id"].GetString() : "";
      commands.emplace_back(wf.HasMember("workflow") && wf["workflow"].IsString() ? wf["workflow"].GetString() : "",
                            wf.HasMember("version") && wf["version"].IsString() ? wf["version"].GetString() : "",
                            id, std::move(*cmd));
      step.RemoveMember("run");
    }
  }
  const std::string envelope = R"({"worker_id":"definitions-file","host":"localhost","version":"0",)"
                               R"("concurrency":1,"definitions":)" + ToJsonText(workflows) + "}";
  auto parsed = ParseRegisterRequest(envelope);
  if (!parsed.ok()) return InFileTerms(parsed.status(), one_workflow);
  out.definitions_ = std::move(parsed->definitions);
  for (auto& [wf, ver, id, cmd] : commands) out.commands_[{wf, ver, id}] = std::move(cmd);
  return out;
}

Result<StepCommands> StepCommands::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read the definitions file '" +
                                   std::filesystem::path(path).filename().string() + "'");
  std::stringstream text;
  text << in.rdbuf();
  auto base = std::filesystem::absolute(path).parent_path().string();
  return Parse(text.str(), base);
}

const StepCommand* StepCommands::Find(std::string_view workflow, std::string_view version,
                                      std::string_view step) const {
  auto it = commands_.find({std::string(workflow), std::string(version), std::string(step)});
  return it == commands_.end() ? nullptr : &it->second;
}

}  // namespace scimesh::launcher
