#pragma once

#include <string>

#include "bus/security.h"
#include "common/config.h"
#include "common/logging.h"

namespace det::autoscaler {

// autoscaler.yaml. Pool limits and providers come from the master's resource_pools config (a later
// issue); this file only says how to reach the master.
struct AutoscalerConfig {
  std::string master_host = "127.0.0.1";
  int event_subscribe_port = 8092;  // the master's bus.event_subscribe_port
  int snapshot_port = 8094;         // the master's bus.snapshot_port
  bus::SecurityConfig security;
  LogConfig log;
};

Result<AutoscalerConfig> ParseAutoscalerConfig(const YAML::Node& doc);

}  // namespace det::autoscaler
