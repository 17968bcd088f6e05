#include "common/url.h"

#include <algorithm>
#include <cctype>

namespace det {

std::string UrlParts::HostHeader() const {
  const bool default_port = (scheme == "http" && port == 80) || (scheme == "https" && port == 443);
  const std::string name = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return default_port ? name : name + ":" + std::to_string(port);
}

Result<UrlParts> ParseUrl(const std::string& url) {
  UrlParts parts;
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return InvalidArgument("URL " + url + " has no scheme");
  parts.scheme = url.substr(0, scheme_end);
  if (parts.scheme != "http" && parts.scheme != "https") {
    return InvalidArgument("URL " + url + ": scheme must be http or https");
  }
  const size_t authority_start = scheme_end + 3;
  size_t path_start = url.find('/', authority_start);
  if (path_start == std::string::npos) path_start = url.size();
  std::string authority = url.substr(authority_start, path_start - authority_start);
  parts.path = path_start < url.size() ? url.substr(path_start) : "/";
  parts.port = parts.scheme == "https" ? 443 : 80;
  size_t port_colon = std::string::npos;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return InvalidArgument("URL " + url + ": unclosed [");
    parts.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') port_colon = close + 1;
  } else {
    port_colon = authority.find(':');
    parts.host = authority.substr(0, port_colon);
  }
  if (port_colon != std::string::npos) {
    const std::string port = authority.substr(port_colon + 1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return InvalidArgument("URL " + url + ": bad port \"" + port + "\"");
    }
    parts.port = std::stoi(port);
    parts.port_given = true;
  }
  if (parts.host.empty()) return InvalidArgument("URL " + url + " has no host");
  return parts;
}

}  // namespace det
