// ArtifactCollector: deletes what no completed attempt refers to. Uploads of
// attempts that ended without completing are forgotten `grace` after the end
// (Ledger::ForgetAbandonedUploads); then every stored file written more than
// `grace` ago that no upload and no completed step refers to is removed (an
// upload refused after its bytes were stored, one a crash left unrecorded).
// "Now" is the Ledger's clock (Options::clock). Thread-safe; owns its thread.
#pragma once

#include <chrono>
#include <cstdint>

#include "coordinator/stoppable_thread.h"
#include "protocol/util/status.h"

namespace scimesh::coordinator {

class ArtifactStore;
class Ledger;

class ArtifactCollector {
 public:
  ArtifactCollector(Ledger& ledger, ArtifactStore& store, std::chrono::milliseconds grace)
      : ledger_(ledger), store_(store), grace_(grace) {}
  ~ArtifactCollector() { Stop(); }
  ArtifactCollector(const ArtifactCollector&) = delete;
  ArtifactCollector& operator=(const ArtifactCollector&) = delete;

  // A pass every grace/4 (at least 100 ms, at most 10 min) on its own thread.
  void Start();
  void Stop();  // joins; idempotent

  struct Pass {
    int64_t files = 0;  // removed
    int64_t bytes = 0;
  };
  // One pass, on the calling thread.
  Result<Pass> CollectOnce();

 private:
  void Loop();

  Ledger& ledger_;
  ArtifactStore& store_;
  const std::chrono::milliseconds grace_;
  StoppableThread thread_;
};

}  // namespace scimesh::coordinator
