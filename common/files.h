#pragma once

#include <optional>
#include <string>

#include "common/status.h"

namespace det {

// The whole contents of the file at `path`; nullopt when it cannot be opened.
std::optional<std::string> ReadFileText(const std::string& path);

// Writes `text` at the start of `path` (made 0644 when missing; a link is refused) with one
// write, padding with spaces over what was longer, so the file's inode stays the same. A reader of
// JSON sees the new document (trailing spaces are whitespace). Contract: a process killed during
// the call leaves the old text or the new, for text under a page.
Status WriteFileInPlace(const std::string& path, const std::string& text);

}  // namespace det
