// MetricsEndpoint: GET /metrics (Prometheus text format) on its own listen
// address (--metrics-listen), apart from the API: it needs no key, so it is
// meant for a loopback or management network that only the scraper reaches.
// One handler thread; a scrape reads the database on its own read-only
// connection. Start/Stop from one thread.
#pragma once

#include <memory>
#include <string>

#include "coordinator/http_server.h"
#include "coordinator/metrics.h"
#include "coordinator/metrics_queries.h"
#include "protocol/util/status.h"

namespace scimesh::coordinator {

class MetricsEndpoint {
 public:
  // Borrows `metrics` and `api` (whose front-end figures it reports); both
  // must outlive the endpoint.
  static Result<std::unique_ptr<MetricsEndpoint>> Start(const std::string& host, int port, const std::string& db_path,
                                                        Metrics& metrics, HttpServer& api);
  ~MetricsEndpoint() { Stop(); }
  int port() const { return server_->port(); }
  void Stop() { server_->Stop(); }

 private:
  MetricsEndpoint() = default;
  std::unique_ptr<LedgerGaugeReader> reader_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace scimesh::coordinator
