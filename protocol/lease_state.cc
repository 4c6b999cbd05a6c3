// The lease state file: JSON, written atomically.
#include "protocol/lease_state.h"

#include <fstream>
#include <sstream>

#include "protocol/atomic_file.h"
#include "protocol/json_io.h"

namespace scimesh {
namespace {

std::optional<CancelReason> ParseLossReason(std::string_view name) {
  for (auto r : {CancelReason::kFenced, CancelReason::kRunTerminal, CancelReason::kExpired,
                 CancelReason::kNotStarted}) {
    if (CancelReasonName(r) == name) return r;
  }
  return std::nullopt;
}

}  // namespace

std::string_view LeaseHoldName(LeaseHold hold) {
  switch (hold) {
    case LeaseHold::kHeld: return "held";
    case LeaseHold::kLost: return "lost";
    case LeaseHold::kDone: return "done";
  }
  return "unknown";
}

std::string SerializeLeaseState(const LeaseState& s) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteString(w, "lease_id", s.lease_id);
  WriteInt(w, "attempt", s.attempt);
  WriteString(w, "holder", s.holder);
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
  w.EndObject();
  return JsonText(buf);
}

Result<LeaseState> ParseLeaseState(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "lease state"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  LeaseState s;
  SCIMESH_ASSIGN_OR_RETURN(s.lease_id, o.String("lease_id"));
  SCIMESH_ASSIGN_OR_RETURN(s.attempt, o.Int("attempt"));
  SCIMESH_ASSIGN_OR_RETURN(s.holder, o.String("holder"));
  SCIMESH_ASSIGN_OR_RETURN(s.host, o.String("host"));
  SCIMESH_ASSIGN_OR_RETURN(s.pid, o.Int("pid"));
  SCIMESH_ASSIGN_OR_RETURN(std::string state, o.String("state"));
  if (state == "held") s.state = LeaseHold::kHeld;
  else if (state == "lost") s.state = LeaseHold::kLost;
  else if (state == "done") s.state = LeaseHold::kDone;
  else return Status::InvalidArgument("state: unknown '" + state + "'");
  SCIMESH_ASSIGN_OR_RETURN(auto reason, o.OptString("reason"));
  if (reason) {
    s.reason = ParseLossReason(*reason);
    if (!s.reason) return Status::InvalidArgument("reason: unknown '" + *reason + "'");
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

Result<LeaseState> ReadLeaseState(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("no lease state file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseLeaseState(ss.str());
}

}  // namespace scimesh
