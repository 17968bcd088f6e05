#pragma once

// The WebUI's files, served from a folder at `/`: index.html for `/`, the hashed assets under
// /assets/ cached for good, everything else revalidated. Nothing outside the folder is reachable.

#include <optional>
#include <string>
#include <string_view>

#include "master/front/http/message.h"

namespace det::master::http {

class StaticFiles {
 public:
  explicit StaticFiles(std::string folder) : folder_(std::move(folder)) {}

  // The file `path` names under the folder, if it is a regular file there (`/` is index.html).
  // Cheap: a stat, no read.
  std::optional<std::string> Find(std::string_view path) const;
  // The file as a response (read now; call it on a worker thread).
  static Response Serve(const std::string& file, std::string_view path);

 private:
  std::string folder_;
};

}  // namespace det::master::http
