// The claim's `free` field and `max`, from the placer's free capacity and the time left.
#include "launcher/placement/capacity.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

namespace scimesh::launcher {

ClaimCapacity ComputeClaimCapacity(const std::vector<NodeFree>& nodes, std::optional<std::chrono::seconds> time_left,
                                   size_t held, const ClaimPolicy& policy) {
  ClaimCapacity out;
  long long free_cpus = 0;
  for (const NodeFree& n : nodes) {
    if (n.cpus <= 0) continue;
    out.free.nodes.push_back(FreeNode{n.name, n.cpus, n.gpus});
    free_cpus += n.cpus;
  }
  out.free.walltime_s =
      time_left.has_value() ? std::max<long long>(0, (*time_left - policy.drain_margin).count()) : kUnlimitedWalltimeS;
  const long long slots = static_cast<long long>(policy.concurrency) - static_cast<long long>(held);
  long long max = std::min<long long>({free_cpus, 64, slots});
  if (out.free.walltime_s < 1) max = 0;
  out.max = static_cast<int>(std::max<long long>(0, max));
  return out;
}

std::string FreeCapacityJson(const FreeCapacity& free) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("nodes");
  w.StartArray();
  for (const FreeNode& n : free.nodes) {
    w.StartObject();
    w.Key("name");
    w.String(n.name.c_str(), static_cast<rapidjson::SizeType>(n.name.size()));
    w.Key("cpus");
    w.Int64(n.cpus);
    w.Key("gpus");
    w.Int64(n.gpus);
    w.EndObject();
  }
  w.EndArray();
  w.Key("walltime_s");
  w.Int64(free.walltime_s);
  w.EndObject();
  return buffer.GetString();
}

}  // namespace scimesh::launcher
