// The coordinator's SQLite schema (idempotent DDL, run at every open).
// Times are ms since the Unix epoch; JSON columns hold compact JSON text.
#pragma once

namespace scimesh::coordinator {

inline constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', '1');

-- Immutable once registered; `canonical` is WorkflowDefinition::CanonicalText.
CREATE TABLE IF NOT EXISTS definitions (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  workflow      TEXT NOT NULL,
  version       TEXT NOT NULL,
  canonical     TEXT NOT NULL,
  registered_at INTEGER NOT NULL,
  UNIQUE (workflow, version)
);

CREATE TABLE IF NOT EXISTS workers (
  worker_id     TEXT PRIMARY KEY,
  host          TEXT NOT NULL,
  version       TEXT NOT NULL,
  concurrency   INTEGER NOT NULL,
  registered_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS worker_definitions (
  worker_id TEXT NOT NULL,
  workflow  TEXT NOT NULL,
  version   TEXT NOT NULL,
  PRIMARY KEY (worker_id, workflow, version)
);

-- Steps a worker refused as `unservable`; cleared when it registers again.
CREATE TABLE IF NOT EXISTS unservable (
  worker_id TEXT NOT NULL,
  workflow  TEXT NOT NULL,
  version   TEXT NOT NULL,
  step_id   TEXT NOT NULL,
  PRIMARY KEY (worker_id, workflow, version, step_id)
);

CREATE TABLE IF NOT EXISTS runs (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id      TEXT NOT NULL UNIQUE,
  workflow    TEXT NOT NULL,
  version     TEXT NOT NULL,
  status      TEXT NOT NULL,
  input       TEXT NOT NULL,
  state       TEXT NOT NULL,
  correlation TEXT NOT NULL,
  trace_id    TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  finished_at INTEGER,
  deadline_at INTEGER,
  last_event  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs(status, deadline_at);

CREATE TABLE IF NOT EXISTS steps (
  run_id     TEXT NOT NULL,
  step_id    TEXT NOT NULL,
  run_seq    INTEGER NOT NULL,
  ord        INTEGER NOT NULL,
  status     TEXT NOT NULL,
  input      TEXT,
  output     TEXT,
  attempts   INTEGER NOT NULL DEFAULT 0,
  spent      INTEGER NOT NULL DEFAULT 0,
  not_before INTEGER NOT NULL DEFAULT 0,
  span_id    TEXT NOT NULL,
  PRIMARY KEY (run_id, step_id)
);
CREATE INDEX IF NOT EXISTS steps_offerable ON steps(status, run_seq, ord);
CREATE INDEX IF NOT EXISTS steps_backoff ON steps(status, not_before);

CREATE TABLE IF NOT EXISTS attempts (
  lease_id      TEXT PRIMARY KEY,
  run_id        TEXT NOT NULL,
  step_id       TEXT NOT NULL,
  attempt       INTEGER NOT NULL,
  worker_id     TEXT NOT NULL,
  key_name      TEXT NOT NULL,
  status        TEXT NOT NULL,
  prev_status   TEXT,
  claimed_at    INTEGER NOT NULL,
  started_at    INTEGER,
  ended_at      INTEGER,
  expires_at    INTEGER NOT NULL,
  error_class   TEXT,
  error_message TEXT,
  progress      TEXT,
  usage         TEXT,
  UNIQUE (run_id, step_id, attempt)
);
CREATE INDEX IF NOT EXISTS attempts_by_clock ON attempts(status, expires_at);

-- Artifacts uploaded on a lease (the coordinator-issued references).
CREATE TABLE IF NOT EXISTS uploads (
  lease_id    TEXT NOT NULL,
  name        TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  worker_id   TEXT NOT NULL,
  sha256      TEXT NOT NULL,
  size        INTEGER NOT NULL,
  media_type  TEXT NOT NULL,
  uri         TEXT NOT NULL,
  uploaded_at INTEGER NOT NULL,
  PRIMARY KEY (lease_id, name)
);
CREATE INDEX IF NOT EXISTS uploads_by_sha ON uploads(sha256);

-- Artifacts of a completed step (as listed in its `complete`).
CREATE TABLE IF NOT EXISTS step_artifacts (
  run_id     TEXT NOT NULL,
  step_id    TEXT NOT NULL,
  ord        INTEGER NOT NULL,
  name       TEXT NOT NULL,
  sha256     TEXT NOT NULL,
  size       INTEGER NOT NULL,
  media_type TEXT NOT NULL,
  uri        TEXT NOT NULL,
  PRIMARY KEY (run_id, step_id, name)
);

-- Tenancy (docs/coordinator.md "Tenancy"): the key that registered a
-- worker_id or a workflow first, and the key that started a run. Tables of
-- their own, so that a database from before them gains them at open; rows
-- from before have no owner.
CREATE TABLE IF NOT EXISTS worker_owners (
  worker_id TEXT PRIMARY KEY,
  key_name  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS workflow_owners (
  workflow TEXT PRIMARY KEY,
  key_name TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_owners (
  run_id   TEXT PRIMARY KEY,
  key_name TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_owners_by_key ON run_owners(key_name);

-- Each worker's largest offer (docs/protocol.md "Unfittable steps"): the
-- nodes of its last claim with `free` made holding nothing ("cpus:gpus,..."),
-- the walltime of its last claim, whether it sends `free` at all, and when it
-- last claimed. A table of its own, so a database from before gains it.
CREATE TABLE IF NOT EXISTS worker_offers (
  worker_id  TEXT PRIMARY KEY,
  nodes      TEXT,
  walltime_s INTEGER NOT NULL,
  aware      INTEGER NOT NULL,
  seen_at    INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS journal (
  run_id    TEXT NOT NULL,
  seq       INTEGER NOT NULL,
  at        INTEGER NOT NULL,
  type      TEXT NOT NULL,
  step_id   TEXT,
  attempt   INTEGER,
  worker_id TEXT,
  detail    TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
)sql";

}  // namespace scimesh::coordinator
