// The allocation's end as SLURM signals it, and the steps it took.
#include "launcher/allocation_end.h"

#include <algorithm>
#include <sstream>

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

void AllocationEnd::SetDeadNodes(std::vector<std::string> nodes) {
  std::lock_guard lock(mu_);
  dead_nodes_ = std::move(nodes);
}

std::string AllocationEnd::DeadNodeOf(const std::vector<std::string>& step_nodes) const {
  std::lock_guard lock(mu_);
  for (const std::string& n : step_nodes) {
    if (std::find(dead_nodes_.begin(), dead_nodes_.end(), n) != dead_nodes_.end()) return n;
  }
  return {};
}

std::vector<std::string> DeadNodesIn(std::string_view sinfo_text, const std::vector<std::string>& ours) {
  std::vector<std::string> dead;
  std::istringstream in{std::string(sinfo_text)};
  std::string name, state;
  while (in >> name >> state) {
    const bool is_dead = state.rfind("down", 0) == 0 || state.rfind("fail", 0) == 0;
    if (is_dead && std::find(ours.begin(), ours.end(), name) != ours.end() &&
        std::find(dead.begin(), dead.end(), name) == dead.end()) {
      dead.push_back(name);
    }
  }
  return dead;
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
