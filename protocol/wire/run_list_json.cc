// JSON for GET /v1/api/runs: the runs a key may read, newest first.
#include "protocol/util/json_members.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"

namespace scimesh {
namespace {

constexpr auto kSummaryMembers = [](auto& m, auto& r) {
  kRunHeadMembers(m, r);
  m.RawOr("correlation", r.correlation_json, "null");
  m.String("created_at", r.created_at);
  m.OptString("finished_at", r.finished_at);
};

constexpr auto kRunListMembers = [](auto& m, auto& list) {
  m.Objects("runs", list.runs, kSummaryMembers);
  m.Bool("more", list.more);
};

}  // namespace

std::string SerializeRunList(const RunList& list) { return MembersText(list, kRunListMembers); }

Result<RunList> ParseRunList(std::string_view json) {
  return ParseMembers<RunList>(json, "run list", {}, kRunListMembers);
}

}  // namespace scimesh
