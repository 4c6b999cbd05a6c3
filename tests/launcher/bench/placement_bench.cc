// Benchmarks: what one placement costs the launcher (Place + Release) on
// large synthetic nodes and allocations. Figures only; nothing is asserted.
#include <benchmark/benchmark.h>

#include "launcher/placement/placement.h"

namespace scimesh::launcher {
namespace {

std::unique_ptr<Placer> Allocation(const char* shape, int nodes) {
  auto topology = Topology::FromSynthetic(shape);
  std::vector<NodeSpec> specs;
  specs.reserve(static_cast<std::size_t>(nodes));
  for (int i = 0; i < nodes; ++i) specs.emplace_back("n" + std::to_string(i), *topology);
  return Placer::Create(std::move(specs)).value();
}

StepResources Step(int nodes, int ranks_per_node, int cpus) {
  StepResources s;
  s.nodes = nodes;
  s.ranks_per_node = ranks_per_node;
  s.cpus_per_rank = cpus;
  return s;
}

// One 1-cpu step placed and released on a node whose other PUs are half busy.
void BM_SingleCpuStep(benchmark::State& state, const char* shape, int nodes) {
  auto placer = Allocation(shape, nodes);
  const int busy = placer->Free()[0].cpus / 2;
  for (int i = 0; i < busy * nodes; ++i) (void)placer->Place(Step(1, 1, 1));
  for (auto _ : state) {
    auto p = placer->Place(Step(1, 1, 1));
    benchmark::DoNotOptimize(p);
    (void)placer->Release(p->id);
  }
}
BENCHMARK_CAPTURE(BM_SingleCpuStep, node_384pu_1, "pack:24 core:8 pu:2", 1);
BENCHMARK_CAPTURE(BM_SingleCpuStep, nodes_128pu_x64, "pack:2 numa:4 core:8 pu:2", 64);

// A 2-node step of 16 ranks x 4 cpus per node on an idle allocation.
void BM_MultiNodeStep(benchmark::State& state, const char* shape, int nodes) {
  auto placer = Allocation(shape, nodes);
  for (auto _ : state) {
    auto p = placer->Place(Step(2, 16, 4));
    benchmark::DoNotOptimize(p);
    (void)placer->Release(p->id);
  }
}
BENCHMARK_CAPTURE(BM_MultiNodeStep, nodes_128pu_x64, "pack:2 numa:4 core:8 pu:2", 64);

// Filling a 384-PU node with 1-cpu steps, then releasing them all.
void BM_FillNode(benchmark::State& state) {
  auto placer = Allocation("pack:24 core:8 pu:2", 1);
  std::vector<uint64_t> ids;
  for (auto _ : state) {
    ids.clear();
    for (;;) {
      auto p = placer->Place(Step(1, 1, 1));
      if (!p.ok()) break;
      ids.push_back(p->id);
    }
    for (uint64_t id : ids) (void)placer->Release(id);
  }
  state.counters["steps"] = static_cast<double>(ids.size());
}
BENCHMARK(BM_FillNode)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace scimesh::launcher

BENCHMARK_MAIN();
