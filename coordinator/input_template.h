// Step input templates (docs/protocol.md "Templates"): JSON whose strings may
// hold {{path}} placeholders, checked at register and rendered when a step
// becomes runnable. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "protocol/util/status.h"

namespace scimesh::coordinator {

// What a template can see. Pointers are borrowed; any may be null (then
// every path under it is "not found").
struct TemplateScope {
  const rapidjson::Value* input = nullptr;  // the run input
  const rapidjson::Value* state = nullptr;  // the run state
  std::string run_id;
  std::map<std::string, const rapidjson::Value*, std::less<>> outputs;  // by step id (the needs)
};

// "" when every placeholder in `template_json` is well formed: `{{` opens a
// placeholder closed by `}}`, the path has no spaces or braces, its root is
// `input`, `run.id`, `run.state` or `steps.<id>.output` with <id> in `needs`,
// and no segment is empty. Otherwise why not, for a 400.
std::string CheckTemplate(std::string_view template_json, const std::vector<std::string>& needs);

// The rendered input as compact JSON text. A string that is exactly one
// placeholder takes the value's JSON type; a placeholder inside a longer
// string becomes the value's compact JSON text (strings without quotes).
// A path that does not resolve: Code::kNotFound with the message
// "input template: '<path>' not found".
Result<std::string> RenderTemplate(std::string_view template_json, const TemplateScope& scope);

}  // namespace scimesh::coordinator
