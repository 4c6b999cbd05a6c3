// Metrics: the coordinator's counters and latency histograms, rendered in the
// Prometheus text exposition format (version 0.0.4) for GET /metrics on the
// separate --metrics-listen address. Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace scimesh::coordinator {

// Cumulative buckets of seconds, from 0.5 ms to 10 s.
class LatencyHistogram {
 public:
  static constexpr std::array<double, 14> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                     0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  void Observe(double seconds);
  // Appends `name`'s HELP, TYPE, _bucket, _sum and _count lines.
  void Render(std::string& out, const std::string& name, const std::string& help) const;

 private:
  mutable std::mutex mu_;
  std::array<uint64_t, kBounds.size()> buckets_{};  // per bucket, not yet cumulative
  uint64_t count_ = 0;
  double sum_ = 0;
};

// What is read from the database at scrape time.
struct LedgerGauges {
  std::map<std::string, int64_t> queued_by_workflow;  // steps waiting to be offered
  int64_t leases_held = 0;                            // attempts leased or running
  int64_t leases_orphaned = 0;                        // expired, within their grace window
  int64_t expiries = 0;                               // attempts expired, ever (journal)
};

// What the front end knows at scrape time.
struct FrontEndGauges {
  int64_t held_claims = 0;
  int64_t open_connections = 0;
  uint64_t closed_for_head = 0;
  uint64_t closed_for_body = 0;
  uint64_t closed_for_room = 0;
};

class Metrics {
 public:
  // One answered request; `route` is the route's template ("unknown" for none).
  void Request(const std::string& method, const std::string& route, int status);
  LatencyHistogram& claim_wake() { return claim_wake_; }
  LatencyHistogram& commit() { return commit_; }

  std::string Render(const LedgerGauges* ledger, const FrontEndGauges& front) const;

 private:
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  LatencyHistogram claim_wake_;
  LatencyHistogram commit_;
};

// "/v1/api/steps/([^/]+)/heartbeat" -> "/v1/api/steps/:id/heartbeat".
std::string RouteTemplate(const std::string& pattern);

}  // namespace scimesh::coordinator
