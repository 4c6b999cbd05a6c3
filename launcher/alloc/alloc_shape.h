// An allocation shape scimesh-alloc may submit (nodes, time limit, what a
// node gives), SLURM's time format, and what one allocation of a shape runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh::alloc {

struct Shape {
  int64_t nodes = 1;
  int64_t time_s = 0;          // the job's time limit (--time)
  int64_t cores_per_node = 0;  // CPUs each node gives the launcher (--ntasks-per-node); 0: not known yet
  int64_t gpus_per_node = 0;   // --gres=gpu:N when above 0
  friend bool operator==(const Shape&, const Shape&) = default;
};

// "nodes=2,time=1:00:00" with optional ",cores=N" and ",gpus=N", in any order.
// nodes 1..10000, time at least one minute, cores 0..100000, gpus 0..1024.
Result<Shape> ParseShape(std::string_view text);
// "2 nodes x 01:00:00" (and " x 8 cores", " x 1 gpus" when set).
std::string ShapeText(const Shape& shape);

// SLURM's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S -> seconds.
// "UNLIMITED", "INVALID", an empty text or a negative part are refused.
Result<int64_t> ParseSlurmTime(std::string_view text);
// Seconds -> "HH:MM:SS", or "D-HH:MM:SS" from one day up.
std::string FormatSlurmTime(int64_t seconds);

// Why one allocation of `shape` cannot run a step of `resources` and
// `walltime_s` when the launcher stops claiming `margin_s` before the end:
// "needs 4 nodes, the largest shape has 2". Empty when it can.
std::string WhyNotFits(const Shape& shape, const Resources& resources, int64_t walltime_s, int64_t margin_s);

// How many such steps one allocation of `shape` runs at once: per node
// cores / (ranks_per_node x cpus_per_rank) (and GPUs likewise), times
// nodes / step nodes. At least 1 when the step fits; 0 when it does not.
int64_t StepsAtOnce(const Shape& shape, const Resources& resources);

}  // namespace scimesh::alloc
