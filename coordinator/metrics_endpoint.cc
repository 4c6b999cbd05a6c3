// The /metrics listener.
#include "coordinator/metrics_endpoint.h"

#include <spdlog/spdlog.h>

namespace scimesh::coordinator {

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(const std::string& host, int port,
                                                               const std::string& db_path, Metrics& metrics,
                                                               HttpServer& api) {
  std::unique_ptr<MetricsEndpoint> e(new MetricsEndpoint);
  auto reader = LedgerGaugeReader::Open(db_path);
  if (!reader.ok()) return reader.status();
  e->reader_ = std::move(*reader);
  HttpServerOptions o;
  o.host = host;
  o.port = port;
  o.threads = 1;  // scrapes one at a time: the reader is not thread-safe
  o.upload_threads = 0;
  o.caps.max_connections = 64;
  o.caps.max_per_address = 16;
  e->server_ = std::make_unique<HttpServer>(o);
  LedgerGaugeReader* r = e->reader_.get();
  e->server_->Route("GET", "/metrics", HttpServer::Lane::kFirst,
                    [r, &metrics, &api](const HttpRequest&, HttpResponse& res, const ContentReader&) {
                      auto ledger = r->Read();
                      if (!ledger.ok()) spdlog::warn("metrics: {}", ledger.status().ToString());
                      FrontEndGauges front;
                      front.held_claims = static_cast<int64_t>(api.held_claims());
                      front.open_connections = api.limits().open();
                      front.closed_for_head = api.limits().closed_for_head();
                      front.closed_for_body = api.limits().closed_for_body();
                      front.closed_for_room = api.limits().closed_for_room();
                      res.status = 200;
                      res.set_content(metrics.Render(ledger.ok() ? &*ledger : nullptr, front),
                                      "text/plain; version=0.0.4");
                    });
  SCIMESH_RETURN_IF_ERROR(e->server_->Start());
  return e;
}

}  // namespace scimesh::coordinator
