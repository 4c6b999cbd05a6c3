// CoordinatorTest: a GoogleTest fixture with a running coordinator, clients
// for each test key, and helpers that read what a user would see (run show,
// journal). Each test gets its own process and database.
#pragma once

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api_client.h"
#include "coordinator_process.h"

namespace scimesh::coordinator::testing {

struct LeaseRef {
  std::string lease_id;
  std::string run_id;
  std::string step_id;
  int64_t attempt = 0;
  std::shared_ptr<rapidjson::Document> json;  // the whole claim reply
  size_t index = 0;                           // in json["leases"]
  const rapidjson::Value& value() const { return (*json)["leases"][static_cast<rapidjson::SizeType>(index)]; }
};

// The SHA-256 of `data`, lowercase hex (as X-Scimesh-Sha256 wants it).
inline std::string Sha256(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 0xF];
  }
  return out;
}

class CoordinatorTest : public ::testing::Test {
 protected:
  virtual CoordinatorProcess::Options ProcessOptions() { return {}; }

  void SetUp() override {
    process_ = std::make_unique<CoordinatorProcess>(ProcessOptions());
    std::string why = process_->Start();
    ASSERT_EQ(why, "");
    w1_ = Client("w1");
    w2_ = Client("w2");
    exec_ = Client("exec");
    root_ = Client("root");
  }

  std::unique_ptr<ApiClient> Client(const std::string& key) {
    return std::make_unique<ApiClient>(process_->port(), process_->token(key));
  }

  // `[{"workflow": W, "version": V, "steps": STEPS}]`
  static std::string Definitions(const std::string& workflow, const std::string& steps_json,
                                 const std::string& version = "1") {
    return R"([{"workflow":)" + Quote(workflow) + R"(,"version":)" + Quote(version) + R"(,"steps":)" + steps_json +
           "}]";
  }

  void RegisterOrDie(ApiClient& c, const std::string& worker, const std::string& definitions) {
    Reply r = c.Register(worker, definitions);
    ASSERT_EQ(r.status, 200) << r.Describe();
  }

  std::string StartRunOrEmpty(const std::string& workflow, const std::string& input = "{}",
                              const std::string& extra = "") {
    Reply r = exec_->StartRun(workflow, input, extra);
    EXPECT_EQ(r.status, 201) << r.Describe();
    return r.Str("run_id");
  }

  std::vector<LeaseRef> Leases(const Reply& r) {
    std::vector<LeaseRef> out;
    EXPECT_EQ(r.status, 200) << r.Describe();
    const rapidjson::Value& leases = r["leases"];
    if (!leases.IsArray()) return out;
    for (rapidjson::SizeType i = 0; i < leases.Size(); ++i) {
      LeaseRef l;
      l.lease_id = leases[i]["lease_id"].GetString();
      l.run_id = leases[i]["run_id"].GetString();
      l.step_id = leases[i]["step_id"].GetString();
      l.attempt = leases[i]["attempt"].GetInt64();
      l.json = r.json;
      l.index = i;
      out.push_back(l);
    }
    return out;
  }

  // Claims with a wait and expects exactly one lease.
  LeaseRef ClaimOne(ApiClient& c, const std::string& worker, int wait_ms = 5000, const std::string& extra = "") {
    auto leases = Leases(c.Claim(worker, 1, wait_ms, extra));
    EXPECT_EQ(leases.size(), 1u);
    return leases.empty() ? LeaseRef{} : leases[0];
  }

  std::string RunStatus(const std::string& run_id) { return exec_->ShowRun(run_id).Str("status"); }

  const rapidjson::Value* FindStep(const Reply& show, const std::string& step_id) {
    const rapidjson::Value& steps = show["steps"];
    if (!steps.IsArray()) return nullptr;
    for (const auto& s : steps.GetArray()) {
      if (step_id == s["step_id"].GetString()) return &s;
    }
    return nullptr;
  }

  std::string StepStatus(const std::string& run_id, const std::string& step_id) {
    Reply show = exec_->ShowRun(run_id);
    const rapidjson::Value* s = FindStep(show, step_id);
    return s == nullptr ? "" : (*s)["status"].GetString();
  }

  std::string AttemptStatus(const std::string& run_id, const std::string& step_id, int64_t attempt) {
    Reply show = exec_->ShowRun(run_id);
    const rapidjson::Value* s = FindStep(show, step_id);
    if (s == nullptr) return "";
    for (const auto& a : (*s)["attempts"].GetArray()) {
      if (a["attempt"].GetInt64() == attempt) return a["status"].GetString();
    }
    return "";
  }

  // Polls `probe` until it returns `want` (a condition, checked every 20 ms).
  template <typename Probe>
  bool Await(Probe probe, const std::string& want, int timeout_ms = 5000) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < until) {
      if (probe() == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return probe() == want;
  }

  // The journal's events as "type step#attempt@worker" strings.
  std::vector<std::string> Events(const std::string& run_id) {
    Reply j = exec_->Journal(run_id);
    std::vector<std::string> out;
    if (!j["events"].IsArray()) return out;
    for (const auto& e : j["events"].GetArray()) {
      std::string s = e["type"].GetString();
      if (e["step_id"].IsString()) s += std::string(" ") + e["step_id"].GetString();
      if (e["attempt"].IsInt64()) s += "#" + std::to_string(e["attempt"].GetInt64());
      if (e["worker_id"].IsString()) s += std::string("@") + e["worker_id"].GetString();
      out.push_back(s);
    }
    return out;
  }

  int CountEvents(const std::string& run_id, const std::string& type) {
    int n = 0;
    for (const auto& e : Events(run_id)) n += e.rfind(type, 0) == 0 && (e.size() == type.size() || e[type.size()] == ' ');
    return n;
  }

  std::unique_ptr<CoordinatorProcess> process_;
  std::unique_ptr<ApiClient> w1_, w2_, exec_, root_;
};


// One step "s" with the given extra members, e.g. R"("max_attempts":2)".
inline std::string OneStep(const std::string& members = "") {
  return R"([{"id":"s")" + (members.empty() ? "" : "," + members) + "}]";
}

}  // namespace scimesh::coordinator::testing
