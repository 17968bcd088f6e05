#include "common/yaml_json.h"

#include <cerrno>
#include <cstdlib>

namespace det {
namespace {

nlohmann::json PlainScalar(const std::string& text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return nullptr;
  }
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  char* end = nullptr;
  errno = 0;
  const long long integer = std::strtoll(text.c_str(), &end, 10);
  if (errno == 0 && end && *end == '\0') return static_cast<int64_t>(integer);
  errno = 0;
  const double number = std::strtod(text.c_str(), &end);
  if (errno == 0 && end && *end == '\0' && text.find_first_of("0123456789") != std::string::npos) {
    return number;
  }
  return text;
}

}  // namespace

nlohmann::json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return node.Tag() == "!" ? nlohmann::json(node.Scalar()) : PlainScalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& item : node) list.push_back(YamlToJson(item));
      return list;
    }
    case YAML::NodeType::Map: {
      nlohmann::json map = nlohmann::json::object();
      for (const auto& entry : node) map[entry.first.Scalar()] = YamlToJson(entry.second);
      return map;
    }
    default:
      return nullptr;
  }
}

}  // namespace det
