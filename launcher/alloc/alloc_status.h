// scimesh-alloc's status: the last tick as JSON (status.json in the state
// directory, rewritten each tick) and as the table `scimesh-alloc status`
// prints.
#pragma once

#include <string>
#include <string_view>

#include "launcher/alloc/alloc_loop.h"
#include "protocol/util/status.h"

namespace scimesh::alloc {

struct StatusHeader {
  std::string name;     // --name
  std::string url;      // the coordinator
  int64_t pid = 0;
  std::string at;       // UTC, ISO 8601
  int64_t paused_s = 0; // seconds of pause left
};

std::string StatusJson(const StatusHeader& header, const LoopState& state, const LoopSettings& settings);

// The table of a status.json; `running`: whether its scimesh-alloc still
// holds the lock. InvalidArgument for a text that is not such a file.
Result<std::string> StatusTable(std::string_view json, bool running);

}  // namespace scimesh::alloc
