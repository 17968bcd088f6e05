#include "autoscaler/autoscaler_config.h"

namespace det::autoscaler {

Result<AutoscalerConfig> ParseAutoscalerConfig(const YAML::Node& doc) {
  AutoscalerConfig config;
  ConfigReader reader(doc);
  reader.Read("master_host", &config.master_host);
  reader.ReadPort("event_subscribe_port", &config.event_subscribe_port);
  reader.ReadPort("snapshot_port", &config.snapshot_port);
  config.security.Read(reader.Child("security"));
  ConfigReader& log = reader.Child("log");
  log.ReadOneOf("level", &config.log.level, kLogLevels);
  log.ReadOneOf("format", &config.log.format, kLogFormats);
  DET_RETURN_IF_ERROR(reader.Finish());
  return config;
}

Result<AutoscalerConfig> LoadAutoscalerConfig(const std::string& path) {
  DET_ASSIGN_OR_RETURN(YAML::Node doc, LoadYamlFile(path));
  auto config = ParseAutoscalerConfig(doc);
  if (!config.ok()) return config.status().WithContext(path);
  return config;
}

}  // namespace det::autoscaler
