// Reading a rank's assigned cores and GPUs, and its rank from the environment.
#include "mpi/rank_assignment.h"

#include <rapidjson/document.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace scimesh::mpi {

Result<std::optional<RankAssignment>> ParseRankAssignment(std::string_view text, int rank) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return Status::InvalidArgument("placement.json is not a JSON object");
  }
  auto ranks = doc.FindMember("ranks");
  if (ranks == doc.MemberEnd() || !ranks->value.IsArray()) {
    return Status::InvalidArgument("placement.json: 'ranks' must be an array");
  }
  for (const auto& r : ranks->value.GetArray()) {
    if (!r.IsObject() || !r.HasMember("rank") || !r["rank"].IsInt()) {
      return Status::InvalidArgument("placement.json: every entry needs an integer 'rank'");
    }
    if (r["rank"].GetInt() != rank) continue;
    RankAssignment a;
    a.rank = rank;
    if (r.HasMember("node") && r["node"].IsString()) a.node = r["node"].GetString();
    if (r.HasMember("cpus")) {
      if (!r["cpus"].IsArray()) return Status::InvalidArgument("placement.json: 'cpus' must be an array");
      for (const auto& c : r["cpus"].GetArray()) {
        if (!c.IsUint()) return Status::InvalidArgument("placement.json: cpu indices must be unsigned integers");
        a.cpus.push_back(c.GetUint());
      }
    }
    if (r.HasMember("gpus")) {
      if (!r["gpus"].IsArray()) return Status::InvalidArgument("placement.json: 'gpus' must be an array");
      for (const auto& g : r["gpus"].GetArray()) {
        if (!g.IsInt() || g.GetInt() < 0) return Status::InvalidArgument("placement.json: gpu indices must be >= 0");
        a.gpus.push_back(g.GetInt());
      }
    }
    return std::optional<RankAssignment>(std::move(a));
  }
  return std::optional<RankAssignment>();
}

Result<std::optional<RankAssignment>> ReadRankAssignment(const std::string& attempt_dir, int rank) {
  const std::string path = attempt_dir + "/placement.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<RankAssignment>();
  std::ifstream in(path);
  if (!in) return Status::Io("cannot read placement.json in the attempt directory");
  std::stringstream text;
  text << in.rdbuf();
  return ParseRankAssignment(text.str(), rank);
}

std::optional<int> GlobalRankFromEnv() {
  for (const char* name : {"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0 && r < (1L << 30)) return static_cast<int>(r);
  }
  return std::nullopt;
}

std::string FormatCpuList(const std::vector<unsigned>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace scimesh::mpi
