#include "agent/shim/shim_protocol.h"

#include <cstddef>
#include <cstdlib>
#include <iterator>

namespace det::agent {

std::string EncodeShimRequest(const ShimRequest& request) {
  std::string payload;
  // An entry ends at its first NUL, as exec would read it: a NUL inside one (a task's variable)
  // must not split it into entries of its own (say, a DET_RUN_AS the agent did not write).
  auto put = [&payload](const std::string& text) {
    payload.append(text.c_str());
    payload += '\0';
  };
  put(request.dir);
  put(std::to_string(request.argv.size()));
  for (const std::string& arg : request.argv) put(arg);
  for (const std::string& entry : request.env) put(entry);
  return payload;
}

bool DecodeShimRequest(std::string_view payload, ShimRequest* out) {
  if (payload.empty() || payload.back() != '\0') return false;
  std::vector<std::string> parts;
  for (size_t from = 0; from < payload.size();) {
    const size_t end = payload.find('\0', from);
    parts.emplace_back(payload.substr(from, end - from));
    from = end + 1;
  }
  if (parts.size() < 3 || parts[0].empty() || parts[1].empty() ||
      parts[1].find_first_not_of("0123456789") != std::string::npos || parts[1].size() > 9) {
    return false;
  }
  const size_t argc = std::strtoul(parts[1].c_str(), nullptr, 10);
  if (argc == 0 || argc > parts.size() - 2) return false;
  ShimRequest request;
  request.dir = std::move(parts[0]);
  request.argv.assign(std::make_move_iterator(parts.begin() + 2),
                      std::make_move_iterator(parts.begin() + 2 + static_cast<ptrdiff_t>(argc)));
  request.env.assign(std::make_move_iterator(parts.begin() + 2 + static_cast<ptrdiff_t>(argc)),
                     std::make_move_iterator(parts.end()));
  *out = std::move(request);
  return true;
}

}  // namespace det::agent
