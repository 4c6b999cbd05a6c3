// libFuzzer harness: every request parser of scimesh-coordinator
// (protocol/wire_json.h's under the server's JSON limits, coordinator/requests.h)
// — register (definitions normalized, their canonical form read back), claim, started, heartbeat, complete, fail, run start, the
// artifact upload query, and the input templates a run renders. Properties
// besides not crashing: a registered definition reads back from its
// canonical text as the same definition.
#include <string>

#include "coordinator/input_template.h"
#include "coordinator/json_text.h"
#include "coordinator/requests.h"
#include "fuzz/fuzz_input.h"

namespace {

using namespace scimesh::coordinator;

void FuzzRegister(std::string_view body) {
  auto req = ReadRegisterRequest(body);
  if (!req.ok()) return;
  for (const WorkflowDefinition& def : req.value().definitions) {
    const std::string canonical = def.CanonicalText();
    auto back = DefinitionFromCanonicalText(canonical);
    if (!back.ok() || back.value().CanonicalText() != canonical) scimesh::fuzz::PropertyBroken();
  }
}

// body: "<template JSON>\n<run input JSON>"; the template may name step "a".
void FuzzTemplate(std::string_view body) {
  size_t nl = body.find('\n');
  std::string_view tmpl = body.substr(0, nl);
  std::string_view input = nl == std::string_view::npos ? std::string_view("{}") : body.substr(nl + 1);
  if (!CheckTemplate(tmpl, {"a"}).empty()) return;
  auto input_doc = ParseJson(input);
  TemplateScope scope;
  scope.run_id = "r_0123456789abcdef";
  if (input_doc.ok()) {
    scope.input = input_doc.value().get();
    scope.state = input_doc.value().get();
    scope.outputs["a"] = input_doc.value().get();
  }
  auto rendered = RenderTemplate(tmpl, scope);
  // What a step receives is JSON the coordinator itself can read.
  if (rendered.ok() && !ParseJson(rendered.value()).ok()) scimesh::fuzz::PropertyBroken();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto [parser, body] = scimesh::fuzz::SplitFuzzInput(data, size);
  if (parser == "template") {
    FuzzTemplate(body);
    return 0;
  }
  if (parser == "artifact_query") {
    size_t nl = body.find('\n');
    const std::string worker(body.substr(0, nl));
    const std::string attempt(nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1));
    (void)ParseArtifactQuery(&worker, &attempt);
    (void)ParseArtifactQuery(nullptr, &attempt);
    return 0;
  }
  if (parser == "register") {
    FuzzRegister(body);
  } else if (parser == "claim") {
    (void)ReadClaimRequest(body);
  } else if (parser == "started") {
    (void)ReadStartedRequest(body);
  } else if (parser == "heartbeat") {
    (void)ReadHeartbeatRequest(body);
  } else if (parser == "complete") {
    (void)ReadCompleteRequest(body);
  } else if (parser == "fail") {
    (void)ReadFailRequest(body);
  } else if (parser == "run.create") {
    (void)ReadRunCreateRequest(body);
  }
  return 0;
}
