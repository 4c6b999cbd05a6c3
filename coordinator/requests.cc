// Parsers for every request body of the protocol.
#include "coordinator/requests.h"

#include <charconv>

#include "coordinator/identifiers.h"
#include "coordinator/json_text.h"

namespace scimesh::coordinator {
namespace {

template <typename T>
ApiResult<T> Finish(const InputProblems& problems, T value) {
  if (problems.any()) return problems.error();
  return value;
}

// worker_id and attempt, sent on every lease call.
void ReadIdentity(FieldReader& r, std::string& worker_id, int64_t& attempt) {
  worker_id = r.String("worker_id", Need::kRequired, 1, 128).value_or("");
  if (!r.problems().any() && !IsWorkerId(worker_id)) {
    r.Fail("worker_id", "must be 1-128 characters of [A-Za-z0-9._:@/-]");
  }
  attempt = r.Int("attempt", Need::kRequired, 1, kMaxWireInt).value_or(0);
}

std::optional<std::string> ObjectText(FieldReader& r, const char* name, Need need) {
  const rapidjson::Value* v = r.Object(name, need);
  if (v == nullptr) return std::nullopt;
  return ToJsonText(*v);
}

FreeCapacity ReadFree(const rapidjson::Value& v, InputProblems& problems) {
  FreeCapacity free;
  FieldReader r(v, "free", problems);
  if (const rapidjson::Value* nodes = r.Array("nodes", Need::kRequired, 0, 4096)) {
    for (rapidjson::SizeType i = 0; i < nodes->Size() && !problems.any(); ++i) {
      FieldReader n((*nodes)[i], "free.nodes[" + std::to_string(i) + "]", problems);
      FreeNode node;
      node.name = n.String("name", Need::kRequired, 1, 255).value_or("");
      node.cpus = n.Int("cpus", Need::kRequired, 0, kMaxWireInt).value_or(0);
      node.gpus = n.Int("gpus", Need::kRequired, 0, kMaxWireInt).value_or(0);
      free.nodes.push_back(std::move(node));
    }
  }
  free.walltime_s = r.Int("walltime_s", Need::kRequired, 0, kMaxWireInt).value_or(0);
  return free;
}

ArtifactRef ReadArtifactRef(const rapidjson::Value& v, const std::string& path, InputProblems& problems) {
  ArtifactRef a;
  FieldReader r(v, path, problems);
  a.name = r.String("name", Need::kRequired, 1, 128).value_or("");
  if (!problems.any() && !IsArtifactName(a.name)) {
    r.Fail("name", "must be 1-128 characters of [A-Za-z0-9._-], not starting with '.'");
  }
  a.uri = r.String("uri", Need::kRequired, 1, 4096).value_or("");
  a.sha256 = r.String("sha256", Need::kRequired, 64, 64).value_or("");
  a.size = r.Int("size", Need::kRequired, 0, INT64_MAX).value_or(0);
  a.media_type = r.String("media_type", Need::kRequired, 1, 255).value_or("");
  return a;
}

}  // namespace

ApiResult<RegisterRequest> ParseRegisterRequest(const rapidjson::Value& body) {
  InputProblems problems;
  RegisterRequest req;
  FieldReader r(body, "", problems);
  req.worker_id = r.String("worker_id", Need::kRequired, 1, 128).value_or("");
  if (!problems.any() && !IsWorkerId(req.worker_id)) {
    r.Fail("worker_id", "must be 1-128 characters of [A-Za-z0-9._:@/-]");
  }
  req.host = r.String("host", Need::kRequired, 1, 255).value_or("");
  req.version = r.String("version", Need::kRequired, 1, 128).value_or("");
  req.concurrency = r.Int("concurrency", Need::kRequired, 1, kMaxConcurrency).value_or(1);
  if (const rapidjson::Value* defs = r.Array("definitions", Need::kRequired, 0, 1024)) {
    for (rapidjson::SizeType i = 0; i < defs->Size() && !problems.any(); ++i) {
      req.definitions.push_back(ReadDefinition((*defs)[i], "definitions[" + std::to_string(i) + "]", problems));
    }
  }
  for (size_t i = 0; i < req.definitions.size() && !problems.any(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (req.definitions[i].workflow == req.definitions[j].workflow &&
          req.definitions[i].version == req.definitions[j].version) {
        problems.Add("definitions[" + std::to_string(i) + "]", "repeats definitions[" + std::to_string(j) + "]");
        break;
      }
    }
  }
  return Finish(problems, std::move(req));
}

ApiResult<ClaimRequest> ParseClaimRequest(const rapidjson::Value& body) {
  InputProblems problems;
  ClaimRequest req;
  FieldReader r(body, "", problems);
  req.worker_id = r.String("worker_id", Need::kRequired, 1, 128).value_or("");
  if (!problems.any() && !IsWorkerId(req.worker_id)) {
    r.Fail("worker_id", "must be 1-128 characters of [A-Za-z0-9._:@/-]");
  }
  req.max = r.Int("max", Need::kRequired, 1, kMaxClaimMax).value_or(1);
  req.wait_ms = r.Int("wait_ms", Need::kOptional, 0, kMaxClaimWaitMs).value_or(0);
  req.run_id = r.String("run_id", Need::kOptional, 1, 64);
  if (!problems.any() && req.run_id && !IsRunId(*req.run_id)) {
    r.Fail("run_id", "must be 'r_' followed by 16 lowercase hex digits");
  }
  if (const rapidjson::Value* free = r.Object("free", Need::kOptional)) req.free = ReadFree(*free, problems);
  return Finish(problems, std::move(req));
}

ApiResult<BeatRequest> ParseStartedRequest(const rapidjson::Value& body) {
  InputProblems problems;
  FieldReader r(body, "", problems);
  BeatRequest req;
  ReadIdentity(r, req.worker_id, req.attempt);
  return Finish(problems, std::move(req));
}

ApiResult<BeatRequest> ParseHeartbeatRequest(const rapidjson::Value& body) {
  InputProblems problems;
  FieldReader r(body, "", problems);
  BeatRequest req;
  ReadIdentity(r, req.worker_id, req.attempt);
  if (const rapidjson::Value* progress = r.Any("progress", Need::kOptional)) {
    std::string text = ToJsonText(*progress);
    if (text.size() > kMaxProgressBytes) {
      r.Fail("progress", "is larger than 4 KiB serialized");
    } else {
      req.progress_json = std::move(text);
    }
  }
  return Finish(problems, std::move(req));
}

ApiResult<CompleteRequest> ParseCompleteRequest(const rapidjson::Value& body) {
  InputProblems problems;
  FieldReader r(body, "", problems);
  CompleteRequest req;
  ReadIdentity(r, req.worker_id, req.attempt);
  req.output_json = ObjectText(r, "output", Need::kRequired).value_or("{}");
  req.state_patch_json = ObjectText(r, "state_patch", Need::kOptional);
  req.usage_json = ObjectText(r, "usage", Need::kOptional);
  if (const rapidjson::Value* arts = r.Array("artifacts", Need::kOptional, 0, 1024)) {
    for (rapidjson::SizeType i = 0; i < arts->Size() && !problems.any(); ++i) {
      req.artifacts.push_back(ReadArtifactRef((*arts)[i], "artifacts[" + std::to_string(i) + "]", problems));
    }
  }
  return Finish(problems, std::move(req));
}

ApiResult<FailRequest> ParseFailRequest(const rapidjson::Value& body) {
  InputProblems problems;
  FieldReader r(body, "", problems);
  FailRequest req;
  ReadIdentity(r, req.worker_id, req.attempt);
  if (const rapidjson::Value* err = r.Object("error", Need::kRequired)) {
    FieldReader e(*err, "error", problems);
    if (auto cls = e.String("class", Need::kRequired, 1, 64)) {
      auto parsed = ParseFailClass(*cls);
      if (!parsed) {
        e.Fail("class", "must be one of retryable, timeout, cancelled, node_failure, invalid_output, "
                        "input_checksum, fatal, unservable, preempted");
      } else {
        req.error_class = *parsed;
      }
    }
    // The message is cut, not refused (docs/protocol.md "Limits").
    if (const rapidjson::Value* m = e.Any("message", Need::kRequired)) {
      if (!m->IsString()) {
        e.Fail("message", "must be a string");
      } else {
        req.message = TruncateUtf8(std::string_view(m->GetString(), m->GetStringLength()), kMaxErrorMessageBytes);
      }
    }
  }
  return Finish(problems, std::move(req));
}

ApiResult<RunCreateRequest> ParseRunCreateRequest(const rapidjson::Value& body) {
  InputProblems problems;
  FieldReader r(body, "", problems);
  RunCreateRequest req;
  req.workflow = r.String("workflow", Need::kRequired, 1, 64).value_or("");
  if (!problems.any() && !IsName(req.workflow)) r.Fail("workflow", "must be 1-64 characters of [A-Za-z0-9._-], not . or ..");
  req.version = r.String("version", Need::kOptional, 1, 64);
  if (!problems.any() && req.version && !IsName(*req.version)) {
    r.Fail("version", "must be 1-64 characters of [A-Za-z0-9._-], not . or ..");
  }
  req.input_json = ObjectText(r, "input", Need::kRequired).value_or("{}");
  if (const rapidjson::Value* c = r.Any("correlation", Need::kOptional)) req.correlation_json = ToJsonText(*c);
  req.deadline_s = r.Int("deadline_s", Need::kOptional, 1, kMaxRunDeadlineS);
  return Finish(problems, std::move(req));
}

ApiResult<LeaseIdentity> ParseArtifactQuery(const std::string* worker_id, const std::string* attempt) {
  if (worker_id == nullptr) return ApiError::BadRequest("worker_id", "is required in the query");
  if (!IsWorkerId(*worker_id)) {
    return ApiError::BadRequest("worker_id", "must be 1-128 characters of [A-Za-z0-9._:@/-]");
  }
  if (attempt == nullptr) return ApiError::BadRequest("attempt", "is required in the query");
  int64_t n = 0;
  auto [end, ec] = std::from_chars(attempt->data(), attempt->data() + attempt->size(), n);
  if (ec != std::errc() || end != attempt->data() + attempt->size() || n < 1 || n > kMaxWireInt) {
    return ApiError::BadRequest("attempt", "must be an integer from 1 to 2147483647");
  }
  return LeaseIdentity{*worker_id, n};
}

}  // namespace scimesh::coordinator
