// Forgetting abandoned uploads and removing the files nothing refers to.
#include "coordinator/artifact_collector.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "coordinator/artifact_store.h"
#include "coordinator/ledger.h"

namespace scimesh::coordinator {

void ArtifactCollector::Start() {
  thread_.Start([this] { Loop(); });
}

void ArtifactCollector::Stop() { thread_.Stop(); }

Result<ArtifactCollector::Pass> ArtifactCollector::CollectOnce() {
  SCIMESH_RETURN_IF_ERROR(ledger_.ForgetAbandonedUploads());
  // Files written since the bound are kept whatever the database says: an
  // upload stores its bytes before it records them.
  const std::chrono::system_clock::time_point now(std::chrono::milliseconds(ledger_.options().clock->NowMs()));
  const auto before = now - grace_;
  Pass pass;
  for (const std::string& sha256 : store_.DigestsOlderThan(before)) {
    SCIMESH_ASSIGN_OR_RETURN(bool referenced, ledger_.ArtifactReferenced(sha256));
    if (referenced) continue;
    if (const int64_t freed = store_.RemoveIfOlderThan(sha256, before); freed > 0) {
      ++pass.files;
      pass.bytes += freed;
    }
  }
  return pass;
}

void ArtifactCollector::Loop() {
  const auto period = std::clamp<std::chrono::milliseconds>(grace_ / 4, std::chrono::milliseconds(100),
                                                            std::chrono::minutes(10));
  while (thread_.WaitFor(period)) {
    try {
      auto pass = CollectOnce();
      if (!pass.ok()) {
        spdlog::warn("artifacts: collection failed, retried later: {}", pass.status().ToString());
      } else if (pass->files > 0) {
        spdlog::info("artifacts: removed {} files ({} bytes) that no completed attempt refers to", pass->files,
                     pass->bytes);
      }
    } catch (const std::exception& e) {  // a thread entry point: nothing may escape
      spdlog::error("artifacts: collection threw: {}", e.what());
    }
  }
}

}  // namespace scimesh::coordinator
