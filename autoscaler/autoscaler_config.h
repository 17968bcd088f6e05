#pragma once

#include <string>

#include "bus/security.h"
#include "common/config.h"
#include "common/logging.h"

namespace det::autoscaler {

// autoscaler.yaml: how to reach the master. Pool limits and providers come from the master's
// resource_pools config (published on the event bus), so the two never disagree.
struct AutoscalerConfig {
  std::string master_host = "127.0.0.1";
  int event_subscribe_port = 8092;  // the master's bus.event_subscribe_port
  int event_publish_port = 8093;    // the master's bus.event_publish_port (decisions go there)
  int snapshot_port = 8094;         // the master's bus.snapshot_port
  bus::SecurityConfig security;
  LogConfig log;
};

Result<AutoscalerConfig> ParseAutoscalerConfig(const YAML::Node& doc);

}  // namespace det::autoscaler
