#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace det {

// Parses a Go-style duration as Determined's configs write them: "500ms", "25s", "5m", "1h30m",
// "1.5s". A bare number is refused (the unit is required).
Result<Duration> ParseDuration(std::string_view text);

// A token's or session's lifespan in seconds: "" -> 0 (the default), "never" or "-1" -> -1, "30d"
// (days), or a Go duration of at least a second ("720h", as Determined's CLI sends days).
Result<int64_t> ParseLifespan(std::string_view text);

// A size in bytes: "4294967296", or a number with a binary unit ("512M", "4G", "4Gi", "1.5GiB";
// K, M, G, T as 1024-based, as Docker reads them). InvalidArgument saying what is expected.
Result<int64_t> ParseByteSize(std::string_view text);
// The inverse, shortest form: 1500ms -> "1.5s", 300s -> "5m".
std::string FormatDuration(Duration d);

// Returns InvalidArgument "<field>: \"<value>\" is not allowed; allowed: a, b, c" unless value is
// one of allowed.
Status CheckOneOf(std::string_view field, std::string_view value,
                  std::span<const char* const> allowed);

// Loads a YAML file; an unreadable file or a syntax error is InvalidArgument naming the file, line
// and column, and so is a document CheckYamlDocument (common/yaml_json.h) refuses: text that is
// not UTF-8, an alias inside its own anchor, aliases that expand past its limits.
Result<YAML::Node> LoadYamlFile(const std::string& path);
Result<YAML::Node> ParseYaml(const std::string& text, const std::string& origin);

// Reads one YAML mapping into a config struct, field by field. Every Read* leaves the target
// untouched when the key is absent (so struct defaults stand) and records an error naming the field
// path, the value and what is allowed when the value is wrong. Finish() also reports keys that no
// Read* asked for, so a misspelt option is an error rather than silently ignored.
//
// Not thread-safe; a reader and its children share one error list.
class ConfigReader {
 public:
  // `path` is the dotted prefix for error messages ("" at the top).
  explicit ConfigReader(YAML::Node node, std::string path = "");

  void Read(std::string_view key, std::string* out);
  void Read(std::string_view key, bool* out);
  void Read(std::string_view key, double* out);
  void Read(std::string_view key, Duration* out);
  void Read(std::string_view key, std::vector<std::string>* out);
  // Integers within [min, max].
  void ReadInt(std::string_view key, int64_t* out, int64_t min, int64_t max);
  void ReadInt(std::string_view key, int* out, int min, int max);
  // A TCP port; 0 means "any free port".
  void ReadPort(std::string_view key, int* out) { ReadInt(key, out, 0, 65535); }
  void ReadOneOf(std::string_view key, std::string* out, std::span<const char* const> allowed);

  // A nested mapping. If the key is absent the child reads nothing and records nothing. The child
  // is owned by this reader and lives as long as it does.
  ConfigReader& Child(std::string_view key);
  bool Has(std::string_view key) const;
  // The elements of a list of mappings, each read like a Child ("key[i]" in messages). Absent:
  // none; not a list: an error.
  std::vector<ConfigReader*> Items(std::string_view key);

  // The node at `key` as it is (absent: a null node), counted as read: for a section another
  // component parses and validates (the autoscaler's view of `provider`).
  YAML::Node Raw(std::string_view key);

  // Keys of this mapping that no Read* asks for are not errors: another component reads them.
  void AllowOtherKeys() { allow_other_keys_ = true; }
  // The mapping this reader reads, as written.
  const YAML::Node& node() const { return node_; }

  // Records an error that already names its field (from a parser of a section's own).
  void AddError(std::string message);

  // Records an error found by the caller's own validation, under this reader's path.
  void Fail(std::string_view key, std::string message);

  // Fields another system (Determined) defines that this one does not implement: each one present
  // is accepted, read no further, and recorded as a warning naming it ("notebook_timeout: ...
  // ignored" plus `why`), so a file written for that system still loads.
  void Ignore(std::initializer_list<std::string_view> keys, std::string_view why);
  // Records a warning under this reader's path (a deprecated form that still works, ...).
  void Warn(std::string_view key, std::string message);
  // Every warning recorded by this reader and the readers sharing its lists, in order.
  const std::vector<std::string>& warnings() const { return shared_->warnings; }

  // OK, or InvalidArgument listing every problem found by this reader and its children.
  Status Finish();

 private:
  struct Shared {
    std::vector<std::string> errors;
    std::vector<std::string> warnings;
  };
  ConfigReader(YAML::Node node, std::string path, std::shared_ptr<Shared> shared);
  std::string FieldPath(std::string_view key) const;
  // The scalar at key, or nullptr-equivalent if absent; records a type error for non-scalars.
  bool Scalar(std::string_view key, std::string* text);
  void CheckUnknownKeys();

  YAML::Node node_;
  bool allow_other_keys_ = false;
  std::string path_;
  std::shared_ptr<Shared> shared_;
  std::vector<std::string> known_;
  std::vector<std::unique_ptr<ConfigReader>> children_;
};

// Loads a component's config file with its parser: an empty `path` means no file (all defaults).
// Errors from the parser are prefixed with the path.
template <class T>
Result<T> LoadConfig(const std::string& path, Result<T> (*parse)(const YAML::Node&)) {
  if (path.empty()) return parse(YAML::Node());
  DET_ASSIGN_OR_RETURN(YAML::Node doc, LoadYamlFile(path));
  Result<T> config = parse(doc);
  if (!config.ok()) return config.status().WithContext(path);
  return config;
}

}  // namespace det
