#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/status.h"

namespace det {

// What every YAML document a component reads must be besides well-formed: UTF-8 text (YAML's own
// rule, which yaml-cpp does not enforce, and what JSON made from it needs), no mapping with the
// same key twice (YAML's rule too: yaml-cpp keeps both), and, with aliases
// followed, a tree of at most kMaxYamlDepth levels and kMaxYamlNodes nodes. yaml-cpp resolves an
// alias inside its own anchor (`&a [*a]`) to a node that contains itself, and aliases of aliases
// (a "billion laughs") to a graph far larger than its text: readers that walk such a document
// would recurse or expand without end. OK, or InvalidArgument naming the first offending place
// ("searcher.metric: not UTF-8 text"); the message never quotes the offending bytes.
inline constexpr int kMaxYamlDepth = 64;
inline constexpr int64_t kMaxYamlNodes = 100000;
Status CheckYamlDocument(const YAML::Node& doc);

// A YAML document as JSON. Plain scalars become what they look like (null, true/false, an
// integer, a number, else a string); quoted scalars stay strings; mappings keep their keys as
// strings. Aliases are followed. A node that is not there (a key the mapping lacks) is null.
nlohmann::json YamlToJson(const YAML::Node& node);

}  // namespace det
