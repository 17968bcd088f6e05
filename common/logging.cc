#include "common/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "common/config.h"

namespace det {
namespace {

// Writes the log message as an escaped JSON string body, for the `%*` flag of the JSON pattern.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string escaped = JsonEscape(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

std::string JsonEscape(std::string_view in) {
  std::string out;
  out.reserve(in.size() + 8);
  for (unsigned char c : in) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

void ReadLogConfig(ConfigReader& reader, LogConfig* config) {
  reader.ReadOneOf("level", &config->level, kLogLevels);
  reader.ReadOneOf("format", &config->format, kLogFormats);
}

Status InitLogging(const LogConfig& config) {
  DET_RETURN_IF_ERROR(CheckOneOf("log.level", config.level, kLogLevels));
  DET_RETURN_IF_ERROR(CheckOneOf("log.format", config.format, kLogFormats));
  auto logger =
      std::make_shared<spdlog::logger>("det", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>(
      config.format == "json" ? spdlog::pattern_time_type::utc : spdlog::pattern_time_type::local);
  if (config.format == "json") {
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n","msg":"%*"})");
  } else {
    formatter->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ %v");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(spdlog::level::from_str(config.level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  return Status::Ok();
}

int SetUpLogging(LogConfig config, const std::string& level_flag, const std::string& format_flag) {
  if (!level_flag.empty()) config.level = level_flag;
  if (!format_flag.empty()) config.format = format_flag;
  Status status = InitLogging(config);
  if (!status.ok()) {
    std::cerr << "error: " << status.message() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace det
