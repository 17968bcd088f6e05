#include "object_store/checkpoint_keys.h"

#include <vector>

namespace det::object_store {

std::string NormalizePrefix(const std::string& prefix) {
  if (prefix.empty()) return "";
  std::vector<std::string> segments;
  for (size_t start = 0; start <= prefix.size();) {
    size_t end = prefix.find('/', start);
    if (end == std::string::npos) end = prefix.size();
    const std::string segment = prefix.substr(start, end - start);
    start = end + 1;
    if (segment.empty() || segment == ".") continue;
    if (segment == "..") {
      if (!segments.empty() && segments.back() != "..") {
        segments.pop_back();
      } else if (prefix.front() != '/') {
        segments.push_back(segment);  // a relative prefix keeps its leading "..", as normpath
      }
      continue;
    }
    segments.push_back(segment);
  }
  if (segments.empty()) return prefix.front() == '/' ? "" : ".";
  std::string out;
  for (const std::string& segment : segments) out += (out.empty() ? "" : "/") + segment;
  return out;
}

std::string CheckpointKeyPrefix(const std::string& prefix, const std::string& uuid) {
  const std::string normalized = NormalizePrefix(prefix);
  return (normalized.empty() ? uuid : normalized + "/" + uuid) + "/";
}

std::string TensorboardKeyPrefix(const std::string& prefix, const std::string& cluster_id,
                                 int64_t experiment_id) {
  return CheckpointKeyPrefix(prefix, cluster_id) + "tensorboard/experiment/" +
         std::to_string(experiment_id) + "/";
}

}  // namespace det::object_store
