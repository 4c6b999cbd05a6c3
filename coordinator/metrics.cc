// Counters, histograms and the Prometheus text format.
#include "coordinator/metrics.h"

#include <fmt/format.h>

namespace scimesh::coordinator {
namespace {

// A label value with \, " and newline escaped as the format requires.
std::string Label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Header(std::string& out, const std::string& name, const char* type, const std::string& help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

void LatencyHistogram::Observe(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) {
      ++buckets_[i];
      break;
    }
  }
  ++count_;
  sum_ += seconds;
}

void LatencyHistogram::Render(std::string& out, const std::string& name, const std::string& help) const {
  std::lock_guard<std::mutex> lock(mu_);
  Header(out, name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, kBounds[i], cumulative);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, count_, name, sum_, name, count_);
}

void Metrics::Request(const std::string& method, const std::string& route, int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{method, route, status}];
}

std::string Metrics::Render(const LedgerGauges* ledger, const FrontEndGauges& front) const {
  std::string out;
  Header(out, "scimesh_http_requests_total", "counter", "HTTP requests answered, by method, route and status.");
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, n] : requests_) {
      const auto& [method, route, status] = key;
      out += fmt::format("scimesh_http_requests_total{{method=\"{}\",route=\"{}\",status=\"{}\"}} {}\n", Label(method),
                         Label(route), status, n);
    }
  }
  Header(out, "scimesh_claims_held", "gauge", "Long-poll claims held now (no thread each).");
  out += fmt::format("scimesh_claims_held {}\n", front.held_claims);
  Header(out, "scimesh_http_connections_open", "gauge", "Open client connections.");
  out += fmt::format("scimesh_http_connections_open {}\n", front.open_connections);
  Header(out, "scimesh_http_connections_cut_total", "counter",
         "Connections closed for a request head past its deadline, a body below the minimum rate, or to make room "
         "(keyless, past a cap, for a newer one).");
  out += fmt::format("scimesh_http_connections_cut_total{{reason=\"head_deadline\"}} {}\n", front.closed_for_head);
  out += fmt::format("scimesh_http_connections_cut_total{{reason=\"body_rate\"}} {}\n", front.closed_for_body);
  out += fmt::format("scimesh_http_connections_cut_total{{reason=\"room\"}} {}\n", front.closed_for_room);
  if (ledger != nullptr) {
    Header(out, "scimesh_steps_queued", "gauge", "Steps waiting to be offered, by workflow.");
    for (const auto& [workflow, n] : ledger->queued_by_workflow) {
      out += fmt::format("scimesh_steps_queued{{workflow=\"{}\"}} {}\n", Label(workflow), n);
    }
    Header(out, "scimesh_leases_held", "gauge", "Leases held by workers (leased or running).");
    out += fmt::format("scimesh_leases_held {}\n", ledger->leases_held);
    Header(out, "scimesh_leases_orphaned", "gauge", "Expired leases still within their grace window.");
    out += fmt::format("scimesh_leases_orphaned {}\n", ledger->leases_orphaned);
    Header(out, "scimesh_lease_expiries_total", "counter", "Attempts expired (lease lost), as recorded in the journal.");
    out += fmt::format("scimesh_lease_expiries_total {}\n", ledger->expiries);
  }
  claim_wake_.Render(out, "scimesh_claim_wake_seconds",
                     "From the announcement that work may be offerable to the answer of a held claim it woke.");
  commit_.Render(out, "scimesh_commit_seconds", "Database commit time (on disk before an answer).");
  return out;
}

std::string RouteTemplate(const std::string& pattern) {
  std::string out = pattern;
  for (size_t at; (at = out.find("([^/]+)")) != std::string::npos;) out.replace(at, 7, ":id");
  return out;
}

}  // namespace scimesh::coordinator
