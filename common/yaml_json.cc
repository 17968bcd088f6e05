#include "common/yaml_json.h"

#include <cerrno>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

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

// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing above U+10FFFF.
bool IsUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      ++i;
      continue;
    }
    const size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC2 ? 2 : 0;
    if (length == 0 || byte > 0xF4 || i + length > text.size()) return false;
    uint32_t code = byte & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    const uint32_t smallest = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
    if (code < smallest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

// Walks `node` (at `path`, `depth` levels down) and every node under it, aliases followed.
class DocumentCheck {
 public:
  Status Walk(const YAML::Node& node, const std::string& path, int depth) {
    const std::string where = path.empty() ? "the document" : path;
    if (++nodes_ > kMaxYamlNodes) {
      return InvalidArgument(where + ": more than " + std::to_string(kMaxYamlNodes) +
                             " values with aliases followed");
    }
    if (depth > kMaxYamlDepth) {
      return InvalidArgument(where + ": nested more than " + std::to_string(kMaxYamlDepth) +
                             " levels deep (an alias inside its own anchor?)");
    }
    switch (node.Type()) {
      case YAML::NodeType::Scalar:
        if (!IsUtf8(node.Scalar())) return InvalidArgument(where + ": not UTF-8 text");
        return Status::Ok();
      case YAML::NodeType::Sequence: {
        size_t index = 0;
        for (const auto& item : node) {
          DET_RETURN_IF_ERROR(Walk(item, path + "[" + std::to_string(index++) + "]", depth + 1));
        }
        return Status::Ok();
      }
      case YAML::NodeType::Map: {
        std::set<std::string> keys;
        for (const auto& entry : node) {
          DET_RETURN_IF_ERROR(
              Walk(entry.first, path + (path.empty() ? "" : ".") + "<key>", depth + 1));
          const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "<key>";
          // Readers disagree on which of two values wins (yaml-cpp's lookup takes the first, a
          // walk the last): one key, one value.
          if (entry.first.IsScalar() && !keys.insert(key).second) {
            return InvalidArgument(where + ": the key \"" + key + "\" appears twice");
          }
          DET_RETURN_IF_ERROR(
              Walk(entry.second, path + (path.empty() ? "" : ".") + key, depth + 1));
        }
        return Status::Ok();
      }
      default:
        return Status::Ok();
    }
  }

 private:
  int64_t nodes_ = 0;
};

}  // namespace

Status CheckYamlDocument(const YAML::Node& doc) { return DocumentCheck().Walk(doc, "", 0); }

nlohmann::json YamlToJson(const YAML::Node& node) {
  if (!node.IsDefined()) return nullptr;  // Type() would throw for a missing key's node
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
