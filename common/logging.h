#pragma once

#include <string>

#include "common/status.h"

namespace det {

// How a process writes its log: `log.level` (trace|debug|info|warn|error|critical|off, default
// info) and `log.format` (text|json, default text). JSON lines carry `time`, `level`, `logger` and
// `msg` and are meant for log shippers.
struct LogConfig {
  std::string level = "info";
  std::string format = "text";
};

inline constexpr const char* kLogLevels[] = {"trace", "debug",    "info", "warn",
                                             "error", "critical", "off"};
inline constexpr const char* kLogFormats[] = {"text", "json"};

// Checks the config and installs it as spdlog's default logger (to stderr), replacing any earlier
// one. Thread-safe with respect to concurrent logging. Returns InvalidArgument naming the field.
Status InitLogging(const LogConfig& config);

// Applies the --log-level/--log-format flags (empty: keep the config's value) and installs logging.
// Returns the exit code to use on failure (2) after printing the error, or 0.
int SetUpLogging(LogConfig config, const std::string& level_flag, const std::string& format_flag);

class ConfigReader;
// Reads a `log:` section (level, format) into *config.
void ReadLogConfig(ConfigReader& reader, LogConfig* config);

// Escapes a string for inclusion in a JSON string literal (without the quotes).
std::string JsonEscape(std::string_view in);

}  // namespace det
