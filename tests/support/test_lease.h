// A valid lease for unit tests (every field the wire parser checks is set).
#pragma once

#include <string>

#include "protocol/wire/wire.h"

namespace scimesh {

inline Lease TestLease(std::string step_id = "solve") {
  Lease l;
  l.lease_id = "l_0c8e51d2a4b94f17";
  l.run_id = "r_6f1c2a9e0b7d4c35";
  l.step_id = step_id;
  l.workflow = "wf";
  l.version = "1";
  l.attempt = 1;
  l.input_json = l.previous_json = l.run_state_json = "{}";
  l.correlation_json = "null";
  l.idempotency_key = l.run_id + "/" + step_id;
  l.trace_id = std::string(32, 'a');
  l.span_id = std::string(16, 'b');
  l.walltime_s = 60;
  l.lease_ttl_ms = 30000;
  l.heartbeat_ms = 1000;
  l.lease_expires_at = "2026-11-29T08:00:30.000Z";
  return l;
}

}  // namespace scimesh
