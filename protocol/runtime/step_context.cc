// The body's view of its lease, and what it reports back.
#include "protocol/runtime/step_context.h"

#include <unistd.h>

#include <cerrno>

#include "protocol/attempt/attempt_dir.h"
#include "protocol/runtime/heartbeat_control.h"
#include "protocol/util/json_io.h"
#include "protocol/wire/identifiers.h"

namespace scimesh {

StepResult StepResult::Output(std::string json_object) {
  StepResult r;
  r.output_ = std::move(json_object);
  return r;
}

StepResult StepResult::Retryable(std::string message) { return Failure(FailClass::kRetryable, std::move(message)); }

StepResult StepResult::Failure(FailClass error_class, std::string message) {
  StepResult r;
  r.error_class_ = error_class;
  r.message_ = std::move(message);
  return r;
}

StepResult StepResult::Fatal(std::string message) { return Failure(FailClass::kFatal, std::move(message)); }

StepContext::StepContext(const Lease& lease, const AttemptDir& dir, HeartbeatControl& heartbeat,
                         std::shared_ptr<const CancellationToken> token)
    : lease_(lease), dir_(dir), heartbeat_(heartbeat), token_(std::move(token)) {
  // The lease parser validated this JSON under the same limits; were it to
  // fail here, the value would stay null, as for an absent one.
  for (auto [text, doc] : {std::pair{&lease.input_json, &input_}, std::pair{&lease.previous_json, &previous_},
                           std::pair{&lease.run_state_json, &run_state_}}) {
    if (auto parsed = ParseJson(*text, "lease"); parsed.ok()) *doc = std::move(*parsed);
  }
}

const std::string& StepContext::attempt_dir() const { return dir_.path(); }

Result<std::string> StepContext::InputArtifactPath(std::string_view step_id, std::string_view name) const {
  for (const auto& a : lease_.input_artifacts) {
    if (a.step_id == step_id && a.name == name) return dir_.InputPath(step_id, name);
  }
  return Status::NotFound("no input artifact " + std::string(name) + " of step " + std::string(step_id));
}

Status StepContext::SetStatePatch(std::string_view json_object) {
  auto doc = ParseJson(json_object, "state patch");
  if (!doc.ok()) return doc.status();
  if (!doc->IsObject()) return Status::InvalidArgument("state patch: must be a JSON object");
  state_patch_ = ToJsonText(*doc);
  return Status::Ok();
}

void StepContext::SetUsage(std::string_view key, double value) { usage_[std::string(key)] = value; }

Status StepContext::AddArtifact(std::string_view name, std::string_view media_type) {
  SCIMESH_RETURN_IF_ERROR(CheckArtifactName(name, "artifact name"));
  for (const auto& a : artifacts_) {
    if (a.name == name) return Status::AlreadyExists("artifact " + std::string(name) + " declared twice");
  }
  artifacts_.push_back({std::string(name), media_type.empty() ? "application/octet-stream" : std::string(media_type)});
  return Status::Ok();
}

Status StepContext::WriteArtifact(std::string_view name, std::string_view bytes, std::string_view media_type) {
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd fd, dir_.CreateArtifact(name));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Io("writing artifact " + std::string(name) + " failed");
    done += static_cast<size_t>(n);
  }
  return AddArtifact(name, media_type);
}

Status StepContext::ReportProgress(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(std::string text, CanonicalJson(json, "progress"));
  if (text.size() > 4096) return Status::InvalidArgument("progress: larger than 4 KiB");
  heartbeat_.SetProgress(std::move(text));
  return Status::Ok();
}

void StepContext::PauseHeartbeats() { heartbeat_.Pause(); }

void StepContext::ResumeHeartbeats(std::optional<LeaseDeadline> deadline) { heartbeat_.Resume(deadline); }

void StepContext::HoldHeartbeatsAlone() { heartbeat_.HoldAlone(); }

void StepContext::LeaseLostElsewhere(CancelReason reason) { heartbeat_.MarkLost(reason); }

}  // namespace scimesh
