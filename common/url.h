#pragma once

// Absolute http(s) URLs taken apart (in det_common_core: det reads DET_MASTER as one without
// loading the HTTP client).

#include <string>

#include "common/status.h"

namespace det {

// The parts of an absolute http(s) URL.
struct UrlParts {
  std::string scheme;       // "http" | "https"
  std::string host;         // without port
  int port = 0;             // explicit or the scheme's default
  std::string path;         // "/" when absent
  bool port_given = false;  // the port is explicit in the URL
  // The Host header's value: host, plus ":port" when it is not the scheme's default.
  std::string HostHeader() const;
};
Result<UrlParts> ParseUrl(const std::string& url);

}  // namespace det
