// Metrics: the Prometheus text format — cumulative buckets, escaped labels.
#include "coordinator/metrics.h"

#include <gtest/gtest.h>

namespace scimesh::coordinator {
namespace {

TEST(Metrics, HistogramBucketsAreCumulativeWithSumAndCount) {
  Metrics m;
  m.commit().Observe(0.0004);
  m.commit().Observe(0.003);
  m.commit().Observe(20);
  const std::string out = m.Render(nullptr, FrontEndGauges{});
  EXPECT_NE(out.find("# TYPE scimesh_commit_seconds histogram\n"), std::string::npos);
  EXPECT_NE(out.find("scimesh_commit_seconds_bucket{le=\"0.0005\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("scimesh_commit_seconds_bucket{le=\"0.005\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("scimesh_commit_seconds_bucket{le=\"10\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("scimesh_commit_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("scimesh_commit_seconds_count 3\n"), std::string::npos) << out;
}

TEST(Metrics, RequestsAreCountedByMethodRouteAndStatusWithEscapedLabels) {
  Metrics m;
  m.Request("POST", RouteTemplate(R"(/v1/api/steps/([^/]+)/heartbeat)"), 200);
  m.Request("POST", RouteTemplate(R"(/v1/api/steps/([^/]+)/heartbeat)"), 200);
  m.Request("GET", "a\"b\\c", 404);
  LedgerGauges ledger;
  ledger.queued_by_workflow["wf"] = 3;
  const std::string out = m.Render(&ledger, FrontEndGauges{});
  EXPECT_NE(out.find(R"(scimesh_http_requests_total{method="POST",route="/v1/api/steps/:id/heartbeat",status="200"} 2)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"(route="a\"b\\c",status="404"} 1)"), std::string::npos) << out;
  EXPECT_NE(out.find(R"(scimesh_steps_queued{workflow="wf"} 3)"), std::string::npos) << out;
}

TEST(Metrics, WithoutTheDatabaseTheLedgerGaugesAreLeftOut) {
  Metrics m;
  const std::string out = m.Render(nullptr, FrontEndGauges{});
  EXPECT_EQ(out.find("scimesh_leases_held"), std::string::npos);
  EXPECT_NE(out.find("scimesh_claims_held 0"), std::string::npos);
}

}  // namespace
}  // namespace scimesh::coordinator
