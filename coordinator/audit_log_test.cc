// Tests of the audit log: line contents and the pacing of failed
// authentications, on a ManualClock.
#include "coordinator/audit_log.h"

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace scimesh::coordinator {
namespace {

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto log = AuditLog::Open(dir_ / "audit.log", clock_);
    ASSERT_TRUE(log.ok());
    log_ = std::move(log).value();
  }
  std::vector<std::string> Lines() {
    std::ifstream in(dir_ / "audit.log");
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  TestDir dir_;  // outlives log_
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'800'000'000'000);
  std::unique_ptr<AuditLog> log_;
};

TEST_F(AuditLogTest, ARecordNamesTheKeyTheCallAndTheRun) {
  log_->Record("alice", "POST", "/v1/api/runs", 201, "r_0123456789abcdef");
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], R"({"time":"2027-01-15T08:00:00.000Z","key":"alice","method":"POST","path":"/v1/api/runs",)"
                      R"("status":201,"run_id":"r_0123456789abcdef"})");
}

TEST_F(AuditLogTest, FailedAuthenticationsArePacedAndTheRestCounted) {
  const int burst = AuditLog::kAuthFailuresPerWindow + 30;
  for (int i = 0; i < burst; ++i) log_->RecordAuthFailure("192.0.2.7", "GET", "/v1/api/runs/x");
  auto lines = Lines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(AuditLog::kAuthFailuresPerWindow));
  EXPECT_NE(lines[0].find(R"("key":null,"method":"GET","path":"/v1/api/runs/x","status":401,"peer":"192.0.2.7")"),
            std::string::npos)
      << lines[0];
  EXPECT_EQ(lines.back().find("suppressed"), std::string::npos);
  // Still within the window: counted, not written.
  clock_->Advance(AuditLog::kAuthWindowMs - 1);
  log_->RecordAuthFailure("192.0.2.7", "GET", "/v1/api/runs/x");
  EXPECT_EQ(Lines().size(), static_cast<size_t>(AuditLog::kAuthFailuresPerWindow));
  // The next window writes again, with what was left out.
  clock_->Advance(1);
  log_->RecordAuthFailure("192.0.2.7", "GET", "/v1/api/runs/x");
  lines = Lines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(AuditLog::kAuthFailuresPerWindow + 1));
  EXPECT_NE(lines.back().find(R"("suppressed":31)"), std::string::npos) << lines.back();
  // Other records are never paced.
  for (int i = 0; i < 3; ++i) log_->Record("bob", "GET", "/v1/api/runs/r_0123456789abcdef", 200);
  EXPECT_EQ(Lines().size(), static_cast<size_t>(AuditLog::kAuthFailuresPerWindow + 4));
}

TEST_F(AuditLogTest, AnAttackersLongPathIsCut) {
  log_->RecordAuthFailure("192.0.2.7", "GET", "/" + std::string(5000, 'a'));
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LT(lines[0].size(), 400u);
}

}  // namespace
}  // namespace scimesh::coordinator
