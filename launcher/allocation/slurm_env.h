// Parsers for the strings SLURM puts in a job's environment and squeue prints.
//
// Pure functions on strings, so they are unit-tested without SLURM; thread-safe.
// Every failure is an InvalidArgument that quotes the offending text.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::launcher {

// Expands a SLURM host list: "n[1-3,5],gpu[01-02]" -> n1 n2 n3 n5 gpu01 gpu02.
// An item may hold several bracket groups, expanded as a product with the
// first group varying slowest ("r[1-2]n[01-02]" -> r1n01 r1n02 r2n01 r2n02).
// A range keeps the width of its first number as zero padding ("[08-10]" ->
// 08 09 10; "[8-10]" -> 8 9 10). Fails on unbalanced or nested brackets, an
// empty item or range, a range that ends before it starts, a host listed
// twice, or more than `max_hosts` hosts.
Result<std::vector<std::string>> ExpandHostList(std::string_view list, size_t max_hosts = 65536);

// Expands SLURM_JOB_CPUS_PER_NODE: "2(x3),1" -> {2, 2, 2, 1}. The count must
// equal `node_count` (the expanded SLURM_JOB_NODELIST).
Result<std::vector<int>> ExpandCpusPerNode(std::string_view text, size_t node_count);

// The GPU count in SLURM_GPUS_PER_NODE / SLURM_GPUS_ON_NODE: "2", "a100:2" or
// "gpu:a100:2" -> 2.
Result<int> ParseGpuCount(std::string_view text);

// An end time as squeue -o %e or scontrol print it: "2026-11-29T12:00:00" in
// the local time zone. "Unknown", "N/A", "NONE" and anything malformed fail.
Result<std::chrono::system_clock::time_point> ParseSlurmTime(std::string_view text);

}  // namespace scimesh::launcher
