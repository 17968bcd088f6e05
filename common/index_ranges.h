#pragma once

// Slurm's job-array index syntax, as `det cmd run --array` takes it: comma-separated items, each
// `N`, `A-B` (A to B) or `A-B:S` (every S-th from A up to B): "1-1000", "0-15:4", "1,3,5-7".

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace det {

inline constexpr int64_t kMaxArrayIndex = 4'000'000;  // Slurm's own ceiling

// The indices in the order written. InvalidArgument naming the item for a malformed item, an index
// past kMaxArrayIndex, an index given twice, an empty list, or more than `max_count` indices.
Result<std::vector<int64_t>> ParseIndexRanges(std::string_view text, size_t max_count);

}  // namespace det
