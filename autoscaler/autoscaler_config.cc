#include "autoscaler/autoscaler_config.h"

namespace det::autoscaler {

Result<AutoscalerConfig> ParseAutoscalerConfig(const YAML::Node& doc) {
  AutoscalerConfig config;
  ConfigReader reader(doc);
  reader.Read("master_host", &config.master_host);
  reader.ReadPort("event_subscribe_port", &config.event_subscribe_port);
  reader.ReadPort("event_publish_port", &config.event_publish_port);
  reader.ReadPort("snapshot_port", &config.snapshot_port);
  config.security.Read(reader.Child("security"));
  ReadLogConfig(reader.Child("log"), &config.log);
  DET_RETURN_IF_ERROR(reader.Finish());
  return config;
}

}  // namespace det::autoscaler
