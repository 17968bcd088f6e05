#include "common/environment.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

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

std::string WhyNotAWorkloadVariable(const std::string& name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ||
      !std::all_of(name.begin(), name.end(), word)) {
    return "\"" + name + "\" is not a variable name (letters, digits and _, not first a digit)";
  }
  if (name.rfind("DET_", 0) == 0 || name == "CUDA_VISIBLE_DEVICES" ||
      name == "NVIDIA_VISIBLE_DEVICES") {
    return name + " is set by det for every workload and may not be set by its config";
  }
  return "";
}

bool WorkloadInherits(const std::string& name) {
  static const std::set<std::string> kNames = {
      "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
      "PYTHONPATH", "PYTHONHOME", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV",
      "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
      "http_proxy", "https_proxy", "no_proxy",
      // Where the cloud's metadata service and region are (no secrets): trial code finds the
      // instance's role or service account through them (the harness's checkpoint storage).
      "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_REGION", "AWS_DEFAULT_REGION", "GCE_METADATA_HOST"};
  for (const char* prefix : {"LC_", "NCCL_", "CONDA_"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return kNames.count(name) > 0;
}

}  // namespace det
