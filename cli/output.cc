#include "cli/output.h"

#include <iostream>

namespace det::cli {
namespace {

using nlohmann::ordered_json;

std::string Field(const ordered_json& value) {
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (!value.is_null()) {
    text = value.dump();
  }
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string Line(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + fields[i];
  return line + "\n";
}

}  // namespace

std::string ToCsv(const ordered_json& value, bool header) {
  if (!value.is_array() && !value.is_object()) return Field(value) + "\n";
  const ordered_json rows = value.is_array() ? value : ordered_json::array({value});
  std::vector<std::string> keys;
  for (const auto& row : rows) {
    if (!row.is_object()) continue;
    for (const auto& [key, unused] : row.items()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  }
  std::string out;
  if (keys.empty()) {  // an array of scalars: one per line
    for (const auto& row : rows) out += Field(row) + "\n";
    return out;
  }
  std::vector<std::string> fields;
  if (header) {
    for (const std::string& key : keys) fields.push_back(Field(key));
    out += Line(fields);
  }
  for (const auto& row : rows) {
    fields.clear();
    for (const std::string& key : keys) {
      fields.push_back(row.is_object() && row.contains(key) ? Field(row[key]) : "");
    }
    out += Line(fields);
  }
  return out;
}

void PrintReply(const CliOptions& options, const ordered_json& value) {
  if (!options.csv) {
    std::cout << value.dump() << "\n";
    return;
  }
  // A follow stream prints one object at a time: the header goes out once.
  static bool header_printed = false;
  std::cout << ToCsv(value, !(value.is_object() && header_printed));
  if (value.is_object()) header_printed = true;
}

}  // namespace det::cli
