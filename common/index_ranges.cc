#include "common/index_ranges.h"

#include <charconv>
#include <string>
#include <unordered_set>

namespace det {
namespace {

// A whole decimal number in 0 .. kMaxArrayIndex, or nothing.
bool ParseIndex(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size() && *out >= 0 &&
         *out <= kMaxArrayIndex;
}

Status Malformed(std::string_view item, std::string_view why) {
  return InvalidArgument("--array item \"" + std::string(item) + "\": " + std::string(why) +
                         " (expected N, A-B or A-B:STEP, comma-separated, indices 0.." +
                         std::to_string(kMaxArrayIndex) + ")");
}

// Appends the indices of one item, refusing repeats and lists past `max_count`.
Status AddItem(std::string_view item, size_t max_count, std::vector<int64_t>* indices,
               std::unordered_set<int64_t>* seen) {
  if (item.find('%') != std::string_view::npos) {
    return Malformed(item, "a %LIMIT of tasks running at once is not supported");
  }
  int64_t first = 0, last = 0, step = 1;
  const size_t dash = item.find('-');
  const size_t colon = item.find(':');
  if (dash == std::string_view::npos) {
    if (colon != std::string_view::npos || !ParseIndex(item, &first)) {
      return Malformed(item, "not an index");
    }
    last = first;
  } else {
    const std::string_view upper = item.substr(
        dash + 1, colon == std::string_view::npos ? std::string_view::npos : colon - dash - 1);
    if (!ParseIndex(item.substr(0, dash), &first) || !ParseIndex(upper, &last)) {
      return Malformed(item, "not a range of indices");
    }
    if (colon != std::string_view::npos &&
        (!ParseIndex(item.substr(colon + 1), &step) || step == 0)) {
      return Malformed(item, "the step must be a whole number of 1 or more");
    }
    if (last < first) return Malformed(item, "the range ends before it starts");
  }
  for (int64_t index = first; index <= last; index += step) {
    if (indices->size() >= max_count) {
      return InvalidArgument("--array: more than " + std::to_string(max_count) +
                             " tasks in one array");
    }
    if (!seen->insert(index).second) {
      return Malformed(item, "index " + std::to_string(index) + " is given twice");
    }
    indices->push_back(index);
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<int64_t>> ParseIndexRanges(std::string_view text, size_t max_count) {
  std::vector<int64_t> indices;
  std::unordered_set<int64_t> seen;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) return Malformed(item, "an empty item");
    DET_RETURN_IF_ERROR(AddItem(item, max_count, &indices, &seen));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return indices;
}

}  // namespace det
