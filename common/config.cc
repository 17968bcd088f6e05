#include "common/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "common/strings.h"
#include "common/yaml_json.h"

namespace det {
namespace {

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string JoinAllowed(std::span<const char* const> allowed) {
  std::string out;
  for (const char* a : allowed) {
    if (!out.empty()) out += ", ";
    out += a;
  }
  return out;
}

struct Unit {
  std::string_view name;
  Duration size;
};
// Longest names first so "ms" is not read as "m" followed by garbage.
constexpr Unit kUnits[] = {
    {"ns", std::chrono::nanoseconds(1)},  {"us", std::chrono::microseconds(1)},
    {"µs", std::chrono::microseconds(1)}, {"ms", std::chrono::milliseconds(1)},
    {"s", std::chrono::seconds(1)},       {"m", std::chrono::minutes(1)},
    {"h", std::chrono::hours(1)},
};

}  // namespace

Result<int64_t> ParseByteSize(std::string_view text) {
  auto invalid = [&] {
    return InvalidArgument("\"" + std::string(text) +
                           "\" is not a size: bytes, or a number with K, M, G or T (e.g. 4G)");
  };
  std::string unit(text);
  size_t digits = 0;
  while (digits < unit.size() &&
         (std::isdigit(static_cast<unsigned char>(unit[digits])) || unit[digits] == '.')) {
    ++digits;
  }
  if (digits == 0) return invalid();
  double number = 0;
  try {
    number = std::stod(unit.substr(0, digits));
  } catch (const std::exception&) {
    return invalid();
  }
  unit = unit.substr(digits);
  for (const char* suffix : {"iB", "B", "i"}) {
    if (unit.size() > 1 && unit.ends_with(suffix)) {
      unit.resize(unit.size() - std::strlen(suffix));
      break;
    }
  }
  static const std::map<std::string, double> kUnits = {{"", 1},
                                                       {"k", 1024.0},
                                                       {"K", 1024.0},
                                                       {"m", 1048576.0},
                                                       {"M", 1048576.0},
                                                       {"g", 1073741824.0},
                                                       {"G", 1073741824.0},
                                                       {"t", 1099511627776.0},
                                                       {"T", 1099511627776.0}};
  auto scale = kUnits.find(unit);
  if (scale == kUnits.end()) return invalid();
  const double bytes = number * scale->second;
  if (bytes < 0 || bytes > 9.0e18) return invalid();
  return static_cast<int64_t>(bytes);
}

Result<Duration> ParseDuration(std::string_view text) {
  const std::string original(text);
  auto bad = [&](const std::string& why) {
    return InvalidArgument(Quote(original) + " is not a duration (" + why +
                           "); use a number with a unit: ns, us, ms, s, m, h, e.g. 30s or 5m");
  };
  if (text.empty()) return bad("empty");
  if (text == "0") return Duration(0);
  double total_ns = 0;
  while (!text.empty()) {
    size_t n = 0;
    while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) || text[n] == '.'))
      ++n;
    if (n == 0) return bad("expected a number at " + Quote(text));
    double value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + n, value);
    if (ec != std::errc() || ptr != text.data() + n) return bad("bad number");
    text.remove_prefix(n);
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (text.starts_with(u.name) && (!unit || u.name.size() > unit->name.size())) unit = &u;
    }
    if (!unit) return bad(text.empty() ? "missing unit" : "unknown unit at " + Quote(text));
    text.remove_prefix(unit->name.size());
    total_ns += value * static_cast<double>(unit->size.count());
  }
  if (total_ns > 9.2e18) return bad("too long");
  return Duration(static_cast<int64_t>(std::llround(total_ns)));
}

Result<int64_t> ParseLifespan(std::string_view text) {
  if (text.empty()) return int64_t{0};
  if (text == "never" || text == "-1") return int64_t{-1};
  if (text.back() == 'd') {
    const std::string_view days = text.substr(0, text.size() - 1);
    if (!days.empty() && days.size() < 6 &&
        days.find_first_not_of("0123456789") == std::string_view::npos) {
      return std::stoll(std::string(days)) * 86400;
    }
  } else if (auto duration = ParseDuration(text); duration.ok()) {
    const int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(*duration).count();
    if (seconds > 0) return seconds;
  }
  return InvalidArgument(Quote(std::string(text)) +
                         " is not a lifespan; give e.g. 30d, 12h, 90m or never");
}

std::string FormatDuration(Duration d) {
  using namespace std::chrono;
  const int64_t ns = d.count();
  if (ns == 0) return "0s";
  const std::pair<Duration, const char*> units[] = {{hours(1), "h"},
                                                    {minutes(1), "m"},
                                                    {seconds(1), "s"},
                                                    {milliseconds(1), "ms"},
                                                    {microseconds(1), "us"}};
  for (const auto& [unit, name] : units) {
    if (ns % unit.count() == 0) return std::to_string(ns / unit.count()) + name;
  }
  return std::to_string(ns) + "ns";
}

Status CheckOneOf(std::string_view field, std::string_view value,
                  std::span<const char* const> allowed) {
  for (const char* a : allowed) {
    if (value == a) return Status::Ok();
  }
  return InvalidArgument(std::string(field) + ": " + Quote(value) +
                         " is not allowed; allowed: " + JoinAllowed(allowed));
}

Result<YAML::Node> ParseYaml(const std::string& text, const std::string& origin) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return InvalidArgument(origin + ": YAML syntax error at line " +
                           std::to_string(e.mark.line + 1) + ", column " +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  DET_RETURN_IF_ERROR(CheckYamlDocument(doc).WithContext(origin));
  return doc;
}

Result<YAML::Node> LoadYamlFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument(path + ": cannot read the file: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return ParseYaml(text.str(), path);
}

ConfigReader::ConfigReader(YAML::Node node, std::string path)
    : ConfigReader(node, std::move(path), std::make_shared<Shared>()) {}  // Node has no move

ConfigReader::ConfigReader(YAML::Node node, std::string path, std::shared_ptr<Shared> shared)
    : node_(node), path_(std::move(path)), shared_(std::move(shared)) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    shared_->errors.push_back((path_.empty() ? std::string("the document") : path_) +
                              ": expected a mapping of fields");
    node_ = YAML::Node();
  }
}

std::string ConfigReader::FieldPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool ConfigReader::Has(std::string_view key) const {
  return node_.IsMap() && node_[std::string(key)].IsDefined();
}

void ConfigReader::Fail(std::string_view key, std::string message) {
  shared_->errors.push_back(FieldPath(key) + ": " + message);
}

void ConfigReader::AddError(std::string message) { shared_->errors.push_back(std::move(message)); }

void ConfigReader::Warn(std::string_view key, std::string message) {
  shared_->warnings.push_back(FieldPath(key) + ": " + message);
}

void ConfigReader::Ignore(std::initializer_list<std::string_view> keys, std::string_view why) {
  for (std::string_view key : keys) {
    known_.emplace_back(key);
    if (!Has(key)) continue;
    std::string message = "not implemented here; ignored";
    if (!why.empty()) message += " (" + std::string(why) + ")";
    Warn(key, std::move(message));
  }
}

bool ConfigReader::Scalar(std::string_view key, std::string* text) {
  known_.emplace_back(key);
  if (!node_.IsMap()) return false;
  YAML::Node value = node_[std::string(key)];
  if (!value.IsDefined() || value.IsNull()) return false;
  if (!value.IsScalar()) {
    Fail(key, "expected a single value, got a " + std::string(value.IsMap() ? "mapping" : "list"));
    return false;
  }
  *text = value.Scalar();
  return true;
}

void ConfigReader::Read(std::string_view key, std::string* out) {
  std::string text;
  if (Scalar(key, &text)) *out = text;
}

void ConfigReader::Read(std::string_view key, bool* out) {
  std::string text;
  if (!Scalar(key, &text)) return;
  if (text == "true" || text == "True" || text == "yes" || text == "on") {
    *out = true;
  } else if (text == "false" || text == "False" || text == "no" || text == "off") {
    *out = false;
  } else {
    Fail(key, Quote(text) + " is not a boolean; allowed: true, false");
  }
}

void ConfigReader::Read(std::string_view key, double* out) {
  std::string text;
  if (!Scalar(key, &text)) return;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    Fail(key, Quote(text) + " is not a number");
    return;
  }
  *out = value;
}

void ConfigReader::Read(std::string_view key, Duration* out) {
  std::string text;
  if (!Scalar(key, &text)) return;
  auto parsed = ParseDuration(text);
  if (!parsed.ok()) {
    Fail(key, parsed.status().message());
    return;
  }
  *out = *parsed;
}

void ConfigReader::Read(std::string_view key, std::vector<std::string>* out) {
  known_.emplace_back(key);
  if (!node_.IsMap()) return;
  YAML::Node value = node_[std::string(key)];
  if (!value.IsDefined() || value.IsNull()) return;
  if (!value.IsSequence()) {
    Fail(key, "expected a list of strings");
    return;
  }
  std::vector<std::string> items;
  for (const auto& item : value) {
    if (!item.IsScalar()) {
      Fail(key, "expected a list of strings, found a nested item");
      return;
    }
    items.push_back(item.Scalar());
  }
  *out = std::move(items);
}

void ConfigReader::ReadInt(std::string_view key, int64_t* out, int64_t min, int64_t max) {
  std::string text;
  if (!Scalar(key, &text)) return;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    Fail(key, Quote(text) + " is not an integer; allowed: " + std::to_string(min) + ".." +
                  std::to_string(max));
    return;
  }
  if (value < min || value > max) {
    Fail(key, Quote(text) + " is out of range; allowed: " + std::to_string(min) + ".." +
                  std::to_string(max));
    return;
  }
  *out = value;
}

void ConfigReader::ReadInt(std::string_view key, int* out, int min, int max) {
  int64_t value = *out;
  ReadInt(key, &value, min, max);
  *out = static_cast<int>(value);
}

void ConfigReader::ReadOneOf(std::string_view key, std::string* out,
                             std::span<const char* const> allowed) {
  std::string text;
  if (!Scalar(key, &text)) return;
  Status s = CheckOneOf(FieldPath(key), text, allowed);
  if (!s.ok()) {
    shared_->errors.push_back(s.message());
    return;
  }
  *out = text;
}

ConfigReader& ConfigReader::Child(std::string_view key) {
  known_.emplace_back(key);
  YAML::Node child = node_.IsMap() ? node_[std::string(key)] : YAML::Node();
  children_.push_back(
      std::unique_ptr<ConfigReader>(new ConfigReader(child, FieldPath(key), shared_)));
  return *children_.back();
}

std::vector<ConfigReader*> ConfigReader::Items(std::string_view key) {
  known_.emplace_back(key);
  std::vector<ConfigReader*> items;
  YAML::Node list = node_.IsMap() ? node_[std::string(key)] : YAML::Node();
  if (!list.IsDefined() || list.IsNull()) return items;
  if (!list.IsSequence()) {
    Fail(key, "expected a list");
    return items;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    children_.push_back(std::unique_ptr<ConfigReader>(
        new ConfigReader(list[i], FieldPath(key) + "[" + std::to_string(i) + "]", shared_)));
    items.push_back(children_.back().get());
  }
  return items;
}

YAML::Node ConfigReader::Raw(std::string_view key) {
  known_.emplace_back(key);
  return node_.IsMap() ? node_[std::string(key)] : YAML::Node();
}

void ConfigReader::CheckUnknownKeys() {
  for (auto& child : children_) child->CheckUnknownKeys();
  if (!node_.IsMap() || allow_other_keys_) return;
  for (const auto& entry : node_) {
    std::string key = entry.first.Scalar();
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const std::string known = Join(known_, ", ");
    shared_->errors.push_back(FieldPath(key) + ": unknown field; known fields here: " + known);
  }
}

Status ConfigReader::Finish() {
  CheckUnknownKeys();
  if (shared_->errors.empty()) return Status::Ok();
  return InvalidArgument(Join(shared_->errors, "; "));
}

}  // namespace det
