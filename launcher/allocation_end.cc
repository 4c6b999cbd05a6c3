// The allocation's end as SLURM signals it, and the steps it took.
#include "launcher/allocation_end.h"

namespace scimesh::launcher {

void AllocationEnd::Mark() {
  std::lock_guard lock(mu_);
  marked_ = true;
  marked_cv_.notify_all();
}

bool AllocationEnd::marked() const {
  std::lock_guard lock(mu_);
  return marked_;
}

bool AllocationEnd::EndedTheStep(const ExitInfo& exit, std::chrono::milliseconds race) const {
  if (!exit.signaled && exit.code == 0) return false;  // it did not fail
  std::unique_lock lock(mu_);
  if (marked_) return true;
  const bool signal_death = exit.signaled || exit.code > 128;
  if (!signal_death) return false;
  return marked_cv_.wait_for(lock, race, [this] { return marked_; });
}

}  // namespace scimesh::launcher
