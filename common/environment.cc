#include "common/environment.h"

#include <cstdlib>

namespace det {

Environment Environment::Process() {
  return {[](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }};
}

Environment Environment::Of(std::map<std::string, std::string> variables) {
  return {
      [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
        auto it = variables.find(name);
        if (it == variables.end()) return std::nullopt;
        return it->second;
      }};
}

std::string Environment::GetOr(const std::string& name, const std::string& fallback) const {
  std::optional<std::string> value = get(name);
  return value && !value->empty() ? *value : fallback;
}

}  // namespace det
