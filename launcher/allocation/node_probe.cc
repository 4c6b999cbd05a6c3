// Probing the other nodes' hwloc topologies with one srun step.
#include "launcher/allocation/node_probe.h"

#include <cctype>

namespace scimesh::launcher {
namespace {

// Node names from the probe go into logs and maps only: keep them plain.
bool PlainName(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) == 0 && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> ProbeCommand(const std::string& srun, const std::vector<std::string>& nodes) {
  std::string list;
  for (const auto& n : nodes) list += (list.empty() ? "" : ",") + n;
  const std::string count = std::to_string(nodes.size());
  return {srun,
          "--nodes=" + count,
          "--ntasks=" + count,
          "--ntasks-per-node=1",
          "--nodelist=" + list,
          "--whole",
          "--overlap",
          "--label",
          "--quiet",
          "--job-name=scimesh-probe",
          "sh",
          "-c",
          "printf 'node=%s\\n' \"$SLURMD_NODENAME\" && exec lstopo-no-graphics --whole-system --of xml -"};
}

Result<std::map<std::string, std::string>> SplitProbeOutput(std::string_view labelled) {
  std::map<int, std::string> node_of_task;
  std::map<int, std::string> xml_of_task;
  size_t at = 0;
  int line_no = 0;
  while (at < labelled.size()) {
    size_t end = labelled.find('\n', at);
    if (end == std::string_view::npos) end = labelled.size();
    std::string_view line = labelled.substr(at, end - at);
    at = end + 1;
    ++line_no;
    // srun --label: optional blanks, the task number, ':', a blank, the text.
    if (line.empty()) continue;
    const size_t p = line.find_first_not_of(' ');
    const size_t colon = p == std::string_view::npos ? p : line.find(':', p);
    int task = 0;
    bool ok = colon != std::string_view::npos && colon > p && colon - p <= 7;
    for (size_t i = p; ok && i < colon; ++i) {
      ok = std::isdigit(static_cast<unsigned char>(line[i])) != 0;
      task = task * 10 + (line[i] - '0');
    }
    if (!ok) {
      return Status::InvalidArgument("probe output line " + std::to_string(line_no) + " is not labelled by task");
    }
    std::string_view text = line.substr(colon + 1);
    if (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (!node_of_task.count(task)) {
      if (text.substr(0, 5) != "node=" || !PlainName(text.substr(5))) {
        return Status::InvalidArgument("probe task " + std::to_string(task) + " names no node");
      }
      node_of_task[task] = std::string(text.substr(5));
      continue;
    }
    xml_of_task[task].append(text).push_back('\n');
  }
  std::map<std::string, std::string> out;
  for (const auto& [task, node] : node_of_task) {
    if (!out.emplace(node, xml_of_task[task]).second) {
      return Status::InvalidArgument("probe tasks " + std::to_string(task) + " and another both ran on " + node);
    }
  }
  return out;
}

ProbedNodes ProbeNodes(const Allocation& allocation, const std::string& srun, const CommandRunner& run) {
  ProbedNodes probed;
  std::vector<std::string> others;
  for (const auto& n : allocation.nodes) {
    if (n.name != allocation.this_node) others.push_back(n.name);
  }
  if (others.empty()) return probed;
  auto output = run(ProbeCommand(srun, others));
  Result<std::map<std::string, std::string>> xml =
      output.ok() ? SplitProbeOutput(*output) : Result<std::map<std::string, std::string>>(output.status());
  if (!xml.ok()) {
    probed.problems.push_back("probing " + std::to_string(others.size()) + " node(s) failed (" +
                              xml.status().message() + "): they are placed as if like this node");
    return probed;
  }
  for (const auto& name : others) {
    auto it = xml->find(name);
    if (it == xml->end() || it->second.empty()) {
      probed.problems.push_back(name + ": no topology from the probe; placed as if like this node");
      continue;
    }
    auto topology = Topology::FromXmlBuffer(it->second);
    if (!topology.ok()) {
      probed.problems.push_back(name + ": its topology does not load (" + topology.status().message() +
                                "); placed as if like this node");
      continue;
    }
    probed.topologies[name] = *topology;
  }
  return probed;
}

}  // namespace scimesh::launcher
