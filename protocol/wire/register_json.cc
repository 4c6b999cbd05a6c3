// JSON for the register call: the worker and the definitions it holds.
#include <algorithm>

#include "protocol/util/json_io.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

void WriteStep(JsonWriter& w, const StepDefinition& s) {
  w.StartObject();
  WriteString(w, "id", s.id);
  w.Key("needs");
  w.StartArray();
  for (const auto& n : s.needs) w.String(n.data(), static_cast<rapidjson::SizeType>(n.size()));
  w.EndArray();
  if (s.input_json) {
    WriteRaw(w, "input", *s.input_json);
  }
  if (s.resources) {
    w.Key("resources");
    WriteResources(w, *s.resources);
  }
  if (s.walltime_s) WriteInt(w, "walltime_s", *s.walltime_s);
  if (s.max_attempts) WriteInt(w, "max_attempts", *s.max_attempts);
  if (s.delivery) WriteString(w, "delivery", DeliveryName(*s.delivery));
  if (s.retry_on) {
    w.Key("retry_on");
    w.StartArray();
    for (FailClass c : *s.retry_on) {
      auto name = FailClassName(c);
      w.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    }
    w.EndArray();
  }
  w.EndObject();
}

// A step's `needs`: step ids.
Result<std::vector<std::string>> NeedsFrom(const JsonObject& o) {
  SCIMESH_ASSIGN_OR_RETURN(const rapidjson::Value* a, o.ArrayIn("needs", 0, kMaxStepNeeds));
  std::vector<std::string> out;
  for (rapidjson::SizeType i = 0; i < a->Size(); ++i) {
    const auto& e = (*a)[i];
    if (!e.IsString() || !CheckIdentifier(std::string_view(e.GetString(), e.GetStringLength()), "").ok()) {
      return Status::InvalidField(ElementPath(o.FieldPath("needs"), i), "must be a step id");
    }
    out.emplace_back(e.GetString(), e.GetStringLength());
  }
  return out;
}

// A step's `retry_on`: budget-spending classes only.
Result<std::vector<FailClass>> RetryOnFrom(const JsonObject& o) {
  SCIMESH_ASSIGN_OR_RETURN(const rapidjson::Value* a, o.ArrayIn("retry_on", 0, kMaxStepRetryOn));
  std::vector<FailClass> out;
  for (rapidjson::SizeType i = 0; i < a->Size(); ++i) {
    const auto& e = (*a)[i];
    std::optional<FailClass> c;
    if (e.IsString()) c = ParseFailClass(std::string_view(e.GetString(), e.GetStringLength()));
    if (!c || !SpendsBudget(*c)) {
      return Status::InvalidField(ElementPath(o.FieldPath("retry_on"), i),
                                  "must be a budget-spending class: retryable, timeout, cancelled, "
                                  "node_failure, invalid_output or input_checksum");
    }
    out.push_back(*c);
  }
  return out;
}

Result<Resources> ResourcesFrom(const JsonObject& r) {
  // Not on the wire: silently ignoring it would run 1 rank per node.
  if (r.Has("ranks")) {
    return Status::InvalidField(r.FieldPath("ranks"),
                                "a total rank count is not supported; give nodes and ranks_per_node");
  }
  SCIMESH_ASSIGN_OR_RETURN(auto nodes, r.OptIntIn("nodes", 1, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(auto rpn, r.OptIntIn("ranks_per_node", 1, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(auto cpr, r.OptIntIn("cpus_per_rank", 1, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(auto gpr, r.OptIntIn("gpus_per_rank", 0, kMaxWireInt));
  return Resources{nodes.value_or(1), rpn.value_or(1), cpr.value_or(1), gpr.value_or(0)};
}

Result<StepDefinition> StepFrom(const JsonObject& o) {
  StepDefinition s;
  SCIMESH_ASSIGN_OR_RETURN(s.id, IdentifierFrom(o, "id"));
  if (o.Has("needs")) {
    SCIMESH_ASSIGN_OR_RETURN(s.needs, NeedsFrom(o));
  }
  if (o.Has("input")) s.input_json = o.OptRaw("input");
  if (o.Has("resources")) {
    SCIMESH_ASSIGN_OR_RETURN(JsonObject r, o.Object("resources"));
    SCIMESH_ASSIGN_OR_RETURN(s.resources, ResourcesFrom(r));
  }
  SCIMESH_ASSIGN_OR_RETURN(s.walltime_s, o.OptIntIn("walltime_s", 1, kMaxStepWalltimeS));
  SCIMESH_ASSIGN_OR_RETURN(s.max_attempts, o.OptIntIn("max_attempts", 1, kMaxStepAttempts));
  SCIMESH_ASSIGN_OR_RETURN(auto delivery, o.OptString("delivery"));
  if (delivery) {
    auto d = ParseDelivery(*delivery);
    if (!d) return Status::InvalidField(o.FieldPath("delivery"), "must be at_least_once or at_most_once");
    s.delivery = *d;
  }
  if (o.Has("retry_on")) {
    SCIMESH_ASSIGN_OR_RETURN(s.retry_on, RetryOnFrom(o));
  }
  return s;
}

Result<WorkflowDefinition> DefinitionFrom(const JsonObject& d) {
  WorkflowDefinition def;
  SCIMESH_ASSIGN_OR_RETURN(def.workflow, IdentifierFrom(d, "workflow"));
  SCIMESH_ASSIGN_OR_RETURN(def.version, IdentifierFrom(d, "version"));
  // At least one step: Objects bounds the count only from above.
  SCIMESH_RETURN_IF_ERROR(d.ArrayIn("steps", 1, kMaxWorkflowSteps).status());
  SCIMESH_RETURN_IF_ERROR(d.Objects("steps", kMaxWorkflowSteps, &def.steps, StepFrom));
  const std::string steps_path = d.FieldPath("steps");
  for (size_t j = 0; j < def.steps.size(); ++j) {
    for (size_t k = 0; k < j; ++k) {
      if (def.steps[k].id == def.steps[j].id) {
        return Status::InvalidField(ElementPath(steps_path, j) + ".id",
                                    "duplicates the id of steps[" + std::to_string(k) + "]");
      }
    }
  }
  // Every need names a step of this workflow (the coordinator also refuses
  // self-needs and cycles, with the same field).
  for (size_t j = 0; j < def.steps.size(); ++j) {
    for (const std::string& need : def.steps[j].needs) {
      const bool known = std::any_of(def.steps.begin(), def.steps.end(),
                                     [&](const StepDefinition& s) { return s.id == need; });
      if (!known) {
        return Status::InvalidField(ElementPath(steps_path, j) + ".needs",
                                    "names '" + need + "', which is not a step of this workflow");
      }
    }
  }
  return def;
}

void WriteDefinition(JsonWriter& w, const WorkflowDefinition& d) {
  w.StartObject();
  WriteString(w, "workflow", d.workflow);
  WriteString(w, "version", d.version);
  WriteArray(w, "steps", d.steps, WriteStep);
  w.EndObject();
}

}  // namespace

std::string SerializeRegisterRequest(const RegisterRequest& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "worker_id", r.worker_id);
    WriteString(w, "host", r.host);
    WriteString(w, "version", r.version);
    WriteInt(w, "concurrency", r.concurrency);
    WriteArray(w, "definitions", r.definitions, WriteDefinition);
  });
}

Result<RegisterRequest> ParseRegisterRequest(std::string_view json, const JsonLimits& limits) {
  return ReadObjectText(json, "register request", limits, [](const JsonObject& o) -> Result<RegisterRequest> {
    RegisterRequest r;
    SCIMESH_ASSIGN_OR_RETURN(r.worker_id, o.String("worker_id"));
    SCIMESH_RETURN_IF_ERROR(CheckWorkerId(r.worker_id, "worker_id"));
    SCIMESH_ASSIGN_OR_RETURN(r.host, o.StringIn("host", 1, kMaxHostBytes));
    SCIMESH_RETURN_IF_ERROR(CheckPrintableText(r.host, "host"));
    SCIMESH_ASSIGN_OR_RETURN(r.version, o.StringIn("version", 1, kMaxVersionBytes));
    SCIMESH_RETURN_IF_ERROR(CheckPrintableText(r.version, "version"));
    SCIMESH_ASSIGN_OR_RETURN(r.concurrency, o.IntIn("concurrency", 1, kMaxConcurrency));
    SCIMESH_RETURN_IF_ERROR(o.Objects("definitions", kMaxDefinitions, &r.definitions, DefinitionFrom));
    for (size_t i = 0; i < r.definitions.size(); ++i) {
      for (size_t k = 0; k < i; ++k) {
        if (r.definitions[k].workflow == r.definitions[i].workflow &&
            r.definitions[k].version == r.definitions[i].version) {
          return Status::InvalidField(ElementPath("definitions", i), "repeats definitions[" + std::to_string(k) + "]");
        }
      }
    }
    return r;
  });
}

Result<WorkflowDefinition> ParseWorkflowDefinition(std::string_view json, const JsonLimits& limits) {
  return ReadObjectText(json, "workflow definition", limits, DefinitionFrom);
}

std::string SerializeRegisterResponse(const RegisterResponse& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "worker_id", r.worker_id);
    WriteInt(w, "lease_ttl_ms", r.lease_ttl_ms);
    WriteInt(w, "heartbeat_ms", r.heartbeat_ms);
  });
}

Result<RegisterResponse> ParseRegisterResponse(std::string_view json) {
  return ReadObjectText(json, "register response", {}, [](const JsonObject& o) -> Result<RegisterResponse> {
    RegisterResponse r;
    SCIMESH_ASSIGN_OR_RETURN(r.worker_id, o.String("worker_id"));
    SCIMESH_ASSIGN_OR_RETURN(r.lease_ttl_ms, o.Int("lease_ttl_ms"));
    SCIMESH_ASSIGN_OR_RETURN(r.heartbeat_ms, o.Int("heartbeat_ms"));
    if (r.lease_ttl_ms < 1 || r.heartbeat_ms < 1) {
      return Status::InvalidArgument("register response: lease_ttl_ms and heartbeat_ms must be positive");
    }
    return r;
  });
}

}  // namespace scimesh
