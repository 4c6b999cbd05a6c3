// The lease state file: JSON, written atomically.
#include "protocol/attempt/lease_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "protocol/attempt/attempt_files.h"
#include "protocol/util/atomic_file.h"
#include "protocol/util/enum_names.h"
#include "protocol/util/json_io.h"

namespace scimesh {
namespace {

std::optional<CancelReason> ParseLossReason(std::string_view name) {
  for (auto r : {CancelReason::kFenced, CancelReason::kRunTerminal, CancelReason::kExpired,
                 CancelReason::kNotStarted}) {
    if (CancelReasonName(r) == name) return r;
  }
  return std::nullopt;
}

Result<LeaseState> ParseStateText(std::string_view text) {
  auto s = ParseLeaseState(text);
  if (!s.ok()) return s.status().WithContext(kLeaseStateFileName);
  return s;
}

}  // namespace

constexpr EnumNames<LeaseHold, 3> kHolds{{
    {LeaseHold::kHeld, "held"},
    {LeaseHold::kLost, "lost"},
    {LeaseHold::kDone, "done"},
}};

constexpr EnumNames<LeaseHolder, 3> kHolders{{
    {LeaseHolder::kWorker, "worker"},
    {LeaseHolder::kLauncher, "launcher"},
    {LeaseHolder::kRank0, "rank0"},
}};

std::string_view LeaseHoldName(LeaseHold hold) { return NameOf(kHolds, hold); }
std::string_view LeaseHolderName(LeaseHolder holder) { return NameOf(kHolders, holder); }
std::optional<LeaseHolder> ParseLeaseHolder(std::string_view name) { return ValueOf(kHolders, name); }

std::string SerializeLeaseState(const LeaseState& s) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "lease_id", s.lease_id);
    WriteInt(w, "attempt", s.attempt);
    WriteString(w, "holder", LeaseHolderName(s.holder));
    WriteString(w, "host", s.host);
    WriteInt(w, "pid", s.pid);
    WriteString(w, "state", LeaseHoldName(s.state));
    w.Key("reason");
    if (s.reason) {
      auto name = CancelReasonName(*s.reason);
      w.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    } else {
      w.Null();
    }
    WriteInt(w, "seq", s.seq);
    WriteInt(w, "deadline_mono_ms", s.deadline_mono_ms);
    WriteString(w, "lease_expires_at", s.lease_expires_at);
  });
}

Result<LeaseState> ParseLeaseState(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "lease state"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  LeaseState s;
  SCIMESH_ASSIGN_OR_RETURN(s.lease_id, o.String("lease_id"));
  SCIMESH_ASSIGN_OR_RETURN(s.attempt, o.Int("attempt"));
  SCIMESH_ASSIGN_OR_RETURN(std::string holder, o.String("holder"));
  auto parsed_holder = ParseLeaseHolder(holder);
  if (!parsed_holder) return Status::InvalidArgument("holder: unknown '" + holder.substr(0, 32) + "'");
  s.holder = *parsed_holder;
  SCIMESH_ASSIGN_OR_RETURN(s.host, o.String("host"));
  SCIMESH_ASSIGN_OR_RETURN(s.pid, o.Int("pid"));
  SCIMESH_ASSIGN_OR_RETURN(std::string state, o.String("state"));
  auto hold = ValueOf(kHolds, state);
  if (!hold) return Status::InvalidArgument("state: unknown '" + state.substr(0, 32) + "'");
  s.state = *hold;
  SCIMESH_ASSIGN_OR_RETURN(auto reason, o.OptString("reason"));
  if (reason) {
    s.reason = ParseLossReason(*reason);
    if (!s.reason) return Status::InvalidArgument("reason: unknown '" + reason->substr(0, 32) + "'");
  }
  if ((s.state == LeaseHold::kLost) != s.reason.has_value()) {
    return Status::InvalidArgument("reason: required exactly when state is 'lost'");
  }
  SCIMESH_ASSIGN_OR_RETURN(s.seq, o.Int("seq"));
  SCIMESH_ASSIGN_OR_RETURN(s.deadline_mono_ms, o.Int("deadline_mono_ms"));
  SCIMESH_ASSIGN_OR_RETURN(s.lease_expires_at, o.String("lease_expires_at"));
  return s;
}

Status WriteLeaseState(const std::string& path, const LeaseState& s) {
  return WriteFileAtomically(path, SerializeLeaseState(s), 0644);
}

Result<LeaseState> ReadLeaseStateAt(int dir_fd, uid_t owner) {
  SCIMESH_ASSIGN_OR_RETURN(std::string text, ReadAttemptFile(dir_fd, kLeaseStateFileName, owner, kMaxStateFileBytes));
  return ParseStateText(text);
}

Result<LeaseState> ReadLeaseState(const std::string& path) {
  SCIMESH_ASSIGN_OR_RETURN(std::string text, ReadAttemptFile(AT_FDCWD, path, ::geteuid(), kMaxStateFileBytes));
  return ParseStateText(text);
}

bool HeldBy(const LeaseState& s, LeaseHolder holder) { return s.holder == holder && s.state == LeaseHold::kHeld; }

std::optional<LeaseDeadline> DeadlineOnHost(const LeaseState& s, std::string_view host) {
  if (s.host != host || s.deadline_mono_ms <= 0) return std::nullopt;
  // A reading past what the clock can hold (the file is anyone's to write)
  // is the far future, not an overflow.
  constexpr int64_t kLatestMs = std::chrono::duration_cast<Millis>(MonoTime::duration::max()).count();
  return LeaseDeadline::At(MonoTime(Millis(std::min(s.deadline_mono_ms, kLatestMs))));
}

LeaseState HandedBack(LeaseState s, LeaseHolder to, int64_t pid) {
  s.holder = to;
  s.pid = pid;
  s.seq += 1;
  return s;
}

}  // namespace scimesh
