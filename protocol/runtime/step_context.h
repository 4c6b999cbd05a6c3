// StepContext: what a step body gets from the Worker, and what it hands back
// (StepResult): input, previous outputs, run state, cancellation, state
// patch, usage, artifacts, progress.
//
// A StepContext is created by the Worker for one lease and used by the body's
// thread. cancellation() and cancelled() may be used from any thread; the
// other members are not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "protocol/util/cancellation.h"
#include "protocol/util/status.h"
#include "protocol/wire/lease_deadline.h"
#include "protocol/wire/wire.h"

namespace scimesh {

class AttemptDir;
class HeartbeatControl;

// How a body ends. Default-constructed: no output at all (an empty result,
// reported as fail invalid_output).
class StepResult {
 public:
  StepResult() = default;
  // Success: `json_object` must be a JSON object ("{}" is a valid empty output).
  static StepResult Output(std::string json_object);
  // A transient failure: a new attempt within the step's budget (class retryable).
  static StepResult Retryable(std::string message);
  // A failure with a named class (timeout, input_checksum, ...).
  static StepResult Failure(FailClass error_class, std::string message);
  // Anything else: the step fails for good (class fatal).
  static StepResult Fatal(std::string message);

  bool has_output() const { return output_.has_value(); }
  const std::optional<std::string>& output() const { return output_; }
  std::optional<FailClass> error_class() const { return error_class_; }
  const std::string& message() const { return message_; }

 private:
  std::optional<std::string> output_;
  std::optional<FailClass> error_class_;
  std::string message_;
};

// An output artifact the body declared: artifacts/<name> in the attempt dir.
struct DeclaredArtifact {
  std::string name;
  std::string media_type;
};

class StepContext {
 public:
  // Worker-internal: all references must outlive the context.
  StepContext(const Lease& lease, const AttemptDir& dir, HeartbeatControl& heartbeat,
              std::shared_ptr<const CancellationToken> token);

  const Lease& lease() const { return lease_; }
  const rapidjson::Document& input() const { return input_; }
  const rapidjson::Document& previous() const { return previous_; }  // outputs of `needs`, by step id
  const rapidjson::Document& run_state() const { return run_state_; }
  // The attempt directory; the body writes nowhere else.
  const std::string& attempt_dir() const;
  // The verified local copy of an input artifact of step `step_id`.
  Result<std::string> InputArtifactPath(std::string_view step_id, std::string_view name) const;

  // Set when the lease is lost or the run is over: stop and return. Pass it
  // to anything that can wait. Thread-safe.
  const CancellationToken& cancellation() const { return *token_; }
  bool cancelled() const { return token_->cancelled(); }

  // Merged into the run state at complete (top-level keys replace). Must be
  // a JSON object.
  Status SetStatePatch(std::string_view json_object);
  // A usage number reported with complete (wall_s is measured unless set).
  void SetUsage(std::string_view key, double value);
  // Declares artifacts/<name>, written by the body, to upload before complete.
  Status AddArtifact(std::string_view name, std::string_view media_type);
  // Writes `bytes` to artifacts/<name> and declares it.
  Status WriteArtifact(std::string_view name, std::string_view bytes, std::string_view media_type);
  // JSON sent as `progress` with the next heartbeat (at most 4 KiB).
  Status ReportProgress(std::string_view json);

  // For a body whose own processes take the lease over (rank 0 of an MPI
  // step): stop this worker's heartbeats while they hold it, and take them
  // back afterwards (see HeartbeatControl::Pause/Resume).
  void PauseHeartbeats();
  void ResumeHeartbeats(std::optional<LeaseDeadline> deadline = std::nullopt);
  // Nobody else will hold the lease or watch its state file (see
  // HeartbeatControl::HoldAlone).
  void HoldHeartbeatsAlone();
  // The process that held the lease for this worker (rank 0) found it lost
  // (`reason`: fenced, run_terminal, expired): cancels the token, so the
  // worker writes nothing more for this lease once the body returns.
  void LeaseLostElsewhere(CancelReason reason);

  // For the Worker, after the body returned.
  const std::optional<std::string>& state_patch() const { return state_patch_; }
  const std::map<std::string, double>& usage() const { return usage_; }
  const std::vector<DeclaredArtifact>& artifacts() const { return artifacts_; }

 private:
  const Lease& lease_;
  const AttemptDir& dir_;
  HeartbeatControl& heartbeat_;
  std::shared_ptr<const CancellationToken> token_;
  rapidjson::Document input_, previous_, run_state_;
  std::optional<std::string> state_patch_;
  std::map<std::string, double> usage_;
  std::vector<DeclaredArtifact> artifacts_;
};

}  // namespace scimesh
