// The fields a definitions file may hold: every object of the user's file is
// checked against them, so a typo ("ranks_per_nodes", "nativ") is refused by
// its path with a suggestion instead of running with a default. The wire
// protocol keeps ignoring unknown fields; this is only the launcher's file.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "protocol/util/status.h"

namespace scimesh::launcher {

// Checks the whole parsed file: the top level ({"workflows": [...]} or one
// workflow object), each workflow, step, resources, run and run.setup /
// run.finish. Free-form values (input, env) are not checked. The error names
// the field by its path, e.g. "workflows[0].steps[2].resources.ranks_per_nodes:
// unknown field; did you mean 'ranks_per_node'?". Pure.
Status CheckKnownFields(const rapidjson::Value& root);

// The closest of `known` to `name` when it is close enough to be a typo
// (Levenshtein distance at most max(2, len/3)), else "". Pure.
std::string ClosestName(std::string_view name, std::initializer_list<std::string_view> known);

// "line L, column C" (both from 1) of byte `offset` in `text`. Pure.
std::string LineAndColumn(std::string_view text, size_t offset);

}  // namespace scimesh::launcher
