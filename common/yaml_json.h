#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

namespace det {

// A YAML document as JSON. Plain scalars become what they look like (null, true/false, an
// integer, a number, else a string); quoted scalars stay strings; mappings keep their keys as
// strings. Aliases are followed.
nlohmann::json YamlToJson(const YAML::Node& node);

}  // namespace det
