// One corpus of valid and invalid messages fed to both sides of the wire
// model: the coordinator's reading of requests (protocol/wire_json.h's
// parsers under the server's limits, requests.h) and the client's (the same
// parsers with the client's limits). Both must give the same verdict on every
// message, and what the client accepts must survive its own serializer and
// still be accepted by the coordinator. The corpus: the examples in
// docs/protocol/, the request fuzzer's committed corpus (fuzz/corpus/), and
// tests/verdicts/ (invalid messages, one rule each). Each corpus file is
// "<parser>\n<body>" like the fuzzer's; an example's parser is its name.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coordinator/requests.h"
#include "protocol/wire/wire_json.h"

namespace scimesh::coordinator {
namespace {

namespace fs = std::filesystem;

struct Message {
  std::string source;  // file, for the failure message
  std::string parser;  // register, claim, started, heartbeat, complete, fail, run.create
  std::string body;
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Message> Corpus() {
  std::vector<Message> out;
  const std::string root = SCIMESH_SOURCE_ROOT_FOR_TESTS;
  for (const auto& e : fs::directory_iterator(root + "/docs/protocol")) {
    const std::string name = e.path().filename().string();
    const std::string suffix = ".request.json";
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    out.push_back({"docs/protocol/" + name, name.substr(0, name.size() - suffix.size()), Slurp(e.path())});
  }
  for (const char* dir : {"/fuzz/corpus/coordinator_requests_fuzzer", "/tests/verdicts"}) {
    for (const auto& e : fs::directory_iterator(root + dir)) {
      const std::string all = Slurp(e.path());
      const size_t nl = all.find('\n');
      if (nl == std::string::npos) continue;
      out.push_back({std::string(dir + 1) + "/" + e.path().filename().string(), all.substr(0, nl), all.substr(nl + 1)});
    }
  }
  return out;
}

// The coordinator's verdict: "" when accepted, else its 400's field and why.
// Its parsers are the client's under the server's limits, plus what only the
// coordinator checks (definitions normalized: cycles, templates).
std::string CoordinatorVerdict(const Message& m) {
  auto verdict = [](const auto& r) { return r.ok() ? std::string() : "refused: " + r.error().field + ": " + r.error().message; };
  if (m.parser == "register") return verdict(ReadRegisterRequest(m.body));
  if (m.parser == "claim") return verdict(ReadClaimRequest(m.body));
  if (m.parser == "started") return verdict(ReadStartedRequest(m.body));
  if (m.parser == "heartbeat") return verdict(ReadHeartbeatRequest(m.body));
  if (m.parser == "complete") return verdict(ReadCompleteRequest(m.body));
  if (m.parser == "fail") return verdict(ReadFailRequest(m.body));
  return verdict(ReadRunCreateRequest(m.body));
}

// The client's verdict, and on acceptance its own serialization of what it read.
std::string ClientVerdict(const Message& m, std::string* written) {
  auto verdict = [&](const auto& parsed, auto serialize) -> std::string {
    if (!parsed.ok()) return "refused: " + parsed.status().message();
    *written = serialize(*parsed);
    return "";
  };
  if (m.parser == "register") return verdict(scimesh::ParseRegisterRequest(m.body), SerializeRegisterRequest);
  if (m.parser == "claim") return verdict(scimesh::ParseClaimRequest(m.body), SerializeClaimRequest);
  if (m.parser == "started" || m.parser == "heartbeat") {
    return verdict(scimesh::ParseBeatRequest(m.body), SerializeBeatRequest);
  }
  if (m.parser == "complete") return verdict(scimesh::ParseCompleteRequest(m.body), SerializeCompleteRequest);
  if (m.parser == "fail") return verdict(scimesh::ParseFailRequest(m.body), SerializeFailRequest);
  return verdict(scimesh::ParseRunCreateRequest(m.body), SerializeRunCreateRequest);
}

bool IsRequestParser(const std::string& p) {
  for (const char* known : {"register", "claim", "started", "heartbeat", "complete", "fail", "run.create"}) {
    if (p == known) return true;
  }
  return false;
}

TEST(VerdictCorpus, BothSidesGiveEveryMessageTheSameVerdict) {
  std::vector<Message> corpus = Corpus();
  size_t checked = 0, accepted = 0;
  std::string disagreements;
  for (const Message& m : corpus) {
    if (!IsRequestParser(m.parser)) continue;  // templates and the artifact query have no client side
    ++checked;
    std::string written;
    const std::string coordinator = CoordinatorVerdict(m);
    const std::string client = ClientVerdict(m, &written);
    if (coordinator.empty() != client.empty()) {
      disagreements += "\n  " + m.source + ": coordinator " + (coordinator.empty() ? "accepts" : coordinator) +
                       "; client " + (client.empty() ? "accepts" : client);
      continue;
    }
    if (!client.empty()) continue;
    ++accepted;
    // What the client writes from what it read is still a valid request.
    const std::string again = CoordinatorVerdict({m.source, m.parser, written});
    if (!again.empty()) disagreements += "\n  " + m.source + ": the client's own serialization is " + again;
  }
  EXPECT_TRUE(disagreements.empty()) << disagreements;
  // The corpus holds both kinds: a test that only ever accepts proves nothing.
  EXPECT_GE(checked, 30u);
  EXPECT_GE(accepted, 8u);
  EXPECT_GE(checked - accepted, 20u);
}

}  // namespace
}  // namespace scimesh::coordinator
