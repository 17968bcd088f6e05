#pragma once

// The process environment, injectable: the cloud clients read their settings (credentials files,
// metadata endpoints, projects and regions) through one, and tests pass a fixed set.

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace det {

struct Environment {
  std::function<std::optional<std::string>(const std::string&)> get;  // an environment variable
  static Environment Process();
  // A fixed set of variables (tests).
  static Environment Of(std::map<std::string, std::string> variables);
  // The variable's value, or `fallback` when it is unset or empty.
  std::string GetOr(const std::string& name, const std::string& fallback) const;
};

}  // namespace det
