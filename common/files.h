#pragma once

#include <optional>
#include <string>

namespace det {

// The whole contents of the file at `path`; nullopt when it cannot be opened.
std::optional<std::string> ReadFileText(const std::string& path);

}  // namespace det
