#pragma once

#include <string>

#include "common/status.h"

namespace det::cli {

// The model definition folder as a gzipped tar (paths relative to the folder; regular files and
// folders only; `.git` and `__pycache__` left out). InvalidArgument naming the folder when it is
// not one or cannot be read, or when the archive passes `max_bytes`.
Result<std::string> PackModelDefinition(const std::string& folder, int64_t max_bytes);

}  // namespace det::cli
