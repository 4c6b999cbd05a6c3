// Index lists in the "0-3,8,10-11" form shared by SLURM, hwloc and taskset.
//
// Pure functions on values: thread-safe, no allocation beyond their results.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh {

// "0-3,8" -> {0, 1, 2, 3, 8}. Accepts single numbers and inclusive ranges
// separated by commas, in any order; returns them sorted. Fails on an empty
// string, a malformed item, a range whose end is below its start, a duplicate,
// an index above `max_index`, or more than `max_count` indices in all.
Result<std::vector<int>> ParseIndexList(std::string_view text, int max_index = (1 << 20),
                                        size_t max_count = 1 << 16);

// {0, 1, 2, 3, 8} -> "0-3,8". `indices` must be sorted and unique; "" when empty.
std::string FormatIndexList(const std::vector<int>& indices);

// {0, 1, 2, 3, 8} -> "0x10f": the hexadecimal mask of srun --cpu-bind=mask_cpu
// and taskset. `indices` must be non-negative; "0x0" when empty.
std::string FormatHexMask(const std::vector<int>& indices);

// Parses a decimal integer in [min, max] with nothing around it.
Result<long long> ParseInteger(std::string_view text, long long min, long long max);

// The items of "a,b,,c" between commas, empty ones included ("" gives one).
std::vector<std::string_view> SplitCommas(std::string_view text);

}  // namespace scimesh
