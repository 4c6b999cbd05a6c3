// Tenancy decisions: worker_id, workflow and run ownership.
#include "coordinator/tenancy.h"

namespace scimesh::coordinator {

bool GlobMatches(std::string_view glob, std::string_view name) {
  // Iterative matching with one backtrack point: linear in practice, never
  // exponential whatever the number of stars.
  size_t g = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (g < glob.size() && glob[g] == '*') {
      star = g++;
      resume = n;
    } else if (g < glob.size() && (glob[g] == '?' || glob[g] == name[n])) {
      ++g;
      ++n;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

bool MayActAsWorker(const KeyIdentity& key, const std::optional<std::string>& owner) {
  return key.admin() || !owner || *owner == key.name;
}

bool MayRegisterWorkflow(const KeyIdentity& key, std::string_view workflow, const std::optional<std::string>& owner) {
  if (key.admin()) return true;
  if (!key.workflows.empty()) {
    for (const std::string& glob : key.workflows) {
      if (GlobMatches(glob, workflow)) return true;
    }
    return false;
  }
  return !owner || *owner == key.name;
}

bool MayReadRunOfAnyOwner(const KeyIdentity& key) { return key.admin() || (key.scopes & kScopeRead) != 0; }

bool MayReadRun(const KeyIdentity& key, const std::optional<std::string>& owner) {
  if (MayReadRunOfAnyOwner(key)) return true;
  return owner && *owner == key.name && (key.scopes & kScopeExecute) != 0;
}

bool MayCancelRun(const KeyIdentity& key, const std::optional<std::string>& owner) {
  if (key.admin()) return true;
  return owner && *owner == key.name && (key.scopes & kScopeExecute) != 0;
}

}  // namespace scimesh::coordinator
