#include "master/experiments/searcher/hyperparameters.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/strings.h"
#include "common/yaml_json.h"

namespace det::master::searcher {
namespace {

using Type = Hyperparameter::Type;

// Collects every problem found, each prefixed with its field path.
struct Errors {
  std::vector<std::string> list;
  void Add(const std::string& path, const std::string& message) {
    list.push_back(path + ": " + message);
  }
};

bool Number(const YAML::Node& node, const std::string& path, Errors& errors, double* out) {
  const nlohmann::json value = YamlToJson(node);
  if (!value.is_number()) {
    errors.Add(path, "must be a number, not " + value.dump());
    return false;
  }
  *out = value.get<double>();
  return true;
}

// The fields each type takes.
const std::set<std::string>& FieldsOf(const std::string& type) {
  static const std::map<std::string, std::set<std::string>> kFields = {
      {"const", {"type", "val"}},
      {"int", {"type", "minval", "maxval", "count"}},
      {"double", {"type", "minval", "maxval", "count"}},
      {"log", {"type", "minval", "maxval", "base", "count"}},
      {"categorical", {"type", "vals"}},
  };
  return kFields.at(type);
}

Hyperparameter ParseOne(const YAML::Node& node, const std::string& path, Errors& errors);

Hyperparameter ParseRange(const YAML::Node& node, const std::string& path, const std::string& type,
                          Errors& errors) {
  Hyperparameter hp;
  hp.type = type == "int" ? Type::kInt : type == "double" ? Type::kDouble : Type::kLog;
  for (const char* field : {"minval", "maxval"}) {
    if (!node[field]) errors.Add(path + "." + field, "is required for type " + type);
  }
  if (node["minval"]) Number(node["minval"], path + ".minval", errors, &hp.minval);
  if (node["maxval"]) Number(node["maxval"], path + ".maxval", errors, &hp.maxval);
  if (hp.type == Type::kInt) {
    for (const char* field : {"minval", "maxval"}) {
      if (node[field] && !YamlToJson(node[field]).is_number_integer()) {
        errors.Add(path + "." + field, "must be an integer for type int");
      }
    }
  }
  if (node["minval"] && node["maxval"] && hp.maxval < hp.minval) {
    errors.Add(path + ".maxval",
               "must not be less than minval (" + YamlToJson(node["minval"]).dump() + ")");
  }
  if (hp.type == Type::kLog && node["base"]) {
    if (Number(node["base"], path + ".base", errors, &hp.base) && !(hp.base > 0 && hp.base != 1)) {
      errors.Add(path + ".base", "must be positive and not 1");
    }
  }
  if (node["count"]) {
    const nlohmann::json count = YamlToJson(node["count"]);
    if (!count.is_number_integer() || count.get<int64_t>() < 1) {
      errors.Add(path + ".count", "must be a positive integer, not " + count.dump());
    } else {
      hp.count = static_cast<int>(count.get<int64_t>());
    }
  }
  return hp;
}

Hyperparameter ParseTyped(const YAML::Node& node, const std::string& path, Errors& errors) {
  const std::string type = node["type"].IsScalar() ? node["type"].Scalar() : "";
  static const std::set<std::string> kTypes = {"const", "int", "double", "log", "categorical"};
  if (!kTypes.count(type)) {
    errors.Add(path + ".type",
               "\"" + type + "\" is not allowed; allowed: const, int, double, log, categorical");
    return {};
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (!FieldsOf(type).count(key)) {
      errors.Add(path + "." + key, "unknown field for type " + type);
    }
  }
  Hyperparameter hp;
  if (type == "const") {
    if (!node["val"]) errors.Add(path + ".val", "is required for type const");
    hp.val = YamlToJson(node["val"]);
  } else if (type == "categorical") {
    hp.type = Type::kCategorical;
    if (!node["vals"] || !node["vals"].IsSequence() || node["vals"].size() == 0) {
      errors.Add(path + ".vals", "must be a non-empty list");
    } else {
      for (const auto& value : node["vals"]) hp.vals.push_back(YamlToJson(value));
    }
  } else {
    hp = ParseRange(node, path, type, errors);
  }
  return hp;
}

Hyperparameter ParseOne(const YAML::Node& node, const std::string& path, Errors& errors) {
  if (!node.IsMap()) {
    Hyperparameter hp;
    hp.val = YamlToJson(node);
    return hp;
  }
  if (node["type"]) return ParseTyped(node, path, errors);
  Hyperparameter group;
  group.type = Type::kNested;
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    group.nested[name] = ParseOne(entry.second, path + "." + name, errors);
  }
  return group;
}

nlohmann::json SampleOne(const Hyperparameter& hp, SearchRng& rng) {
  switch (hp.type) {
    case Type::kConst:
      return hp.val;
    case Type::kInt: {
      const auto low = static_cast<int64_t>(hp.minval), high = static_cast<int64_t>(hp.maxval);
      return low + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(high - low + 1)));
    }
    case Type::kDouble:
      return rng.Uniform(hp.minval, hp.maxval);
    case Type::kLog:
      return std::pow(hp.base, rng.Uniform(hp.minval, hp.maxval));
    case Type::kCategorical:
      return hp.vals[rng.Below(hp.vals.size())];
    case Type::kNested: {
      nlohmann::json group = nlohmann::json::object();
      for (const auto& [name, inner] : hp.nested) group[name] = SampleOne(inner, rng);
      return group;
    }
  }
  return nullptr;
}

// Evenly spaced with both ends; the middle for one point.
std::vector<double> Spaced(double low, double high, int count) {
  if (count == 1) return {(low + high) / 2};
  std::vector<double> points;
  for (int i = 0; i < count; ++i) points.push_back(low + (high - low) * i / (count - 1));
  return points;
}

std::vector<nlohmann::json> AxisValues(const Hyperparameter& hp) {
  switch (hp.type) {
    case Type::kConst:
      return {hp.val};
    case Type::kCategorical:
      return hp.vals;
    case Type::kInt: {
      const auto low = static_cast<int64_t>(hp.minval), high = static_cast<int64_t>(hp.maxval);
      const int count = static_cast<int>(std::min<int64_t>(*hp.count, high - low + 1));
      std::vector<nlohmann::json> values;
      if (count == 1) return {static_cast<int64_t>(std::round((low + high) / 2.0))};
      for (int i = 0; i < count; ++i) {
        values.push_back(static_cast<int64_t>(std::round(
            static_cast<double>(low) + static_cast<double>(i * (high - low)) / (count - 1))));
      }
      return values;
    }
    case Type::kDouble: {
      std::vector<nlohmann::json> values;
      for (double x : Spaced(hp.minval, hp.maxval, *hp.count)) values.push_back(x);
      return values;
    }
    case Type::kLog: {
      std::vector<nlohmann::json> values;
      for (double x : Spaced(hp.minval, hp.maxval, *hp.count))
        values.push_back(std::pow(hp.base, x));
      return values;
    }
    case Type::kNested:
      break;
  }
  return {};
}

// The grid's axes, depth first in name order: (path of names, values).
void Axes(const Hyperparameters& hparams, std::vector<std::string> prefix,
          std::vector<std::pair<std::vector<std::string>, std::vector<nlohmann::json>>>* axes,
          Errors& errors) {
  for (const auto& [name, hp] : hparams) {
    std::vector<std::string> path = prefix;
    path.push_back(name);
    if (hp.type == Type::kNested) {
      Axes(hp.nested, path, axes, errors);
      continue;
    }
    const bool numeric = hp.type == Type::kInt || hp.type == Type::kDouble || hp.type == Type::kLog;
    if (numeric && !hp.count) {
      std::string dotted = "hyperparameters";
      for (const auto& part : path) dotted += "." + part;
      errors.Add(dotted + ".count", "grid search is in use but count was not provided");
      continue;
    }
    axes->emplace_back(path, AxisValues(hp));
  }
}

Status Combined(const Errors& errors) {
  if (errors.list.empty()) return Status::Ok();
  return InvalidArgument(Join(errors.list, "; "));
}

}  // namespace

Hyperparameters ParseHyperparameters(const YAML::Node& node, std::vector<std::string>* errors) {
  Hyperparameters hparams;
  if (!node || node.IsNull()) return hparams;
  if (!node.IsMap()) {
    errors->push_back("hyperparameters: must be a mapping of names");
    return hparams;
  }
  Errors found;
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    hparams[name] = ParseOne(entry.second, "hyperparameters." + name, found);
  }
  errors->insert(errors->end(), found.list.begin(), found.list.end());
  return hparams;
}

Result<Hyperparameters> ParseHyperparameters(const YAML::Node& node) {
  Errors errors;
  Hyperparameters hparams = ParseHyperparameters(node, &errors.list);
  DET_RETURN_IF_ERROR(Combined(errors));
  return hparams;
}

nlohmann::json Sample(const Hyperparameters& hparams, SearchRng& rng) {
  nlohmann::json sample = nlohmann::json::object();
  for (const auto& [name, hp] : hparams) sample[name] = SampleOne(hp, rng);
  return sample;
}

Result<std::vector<nlohmann::json>> GridPoints(const Hyperparameters& hparams) {
  std::vector<std::pair<std::vector<std::string>, std::vector<nlohmann::json>>> axes;
  Errors errors;
  Axes(hparams, {}, &axes, errors);
  DET_RETURN_IF_ERROR(Combined(errors));
  std::vector<nlohmann::json> points = {nlohmann::json::object()};
  for (const auto& [path, values] : axes) {  // the first axis ends up outermost
    std::vector<nlohmann::json> next;
    for (const nlohmann::json& point : points) {
      for (const nlohmann::json& value : values) {
        nlohmann::json extended = point;
        nlohmann::json* at = &extended;
        for (const std::string& part : path) at = &(*at)[part];
        *at = value;
        next.push_back(std::move(extended));
      }
    }
    points = std::move(next);
  }
  return points;
}

}  // namespace det::master::searcher
