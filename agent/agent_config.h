#pragma once

#include <string>

#include "bus/agent_channel.h"
#include "bus/backoff.h"
#include "bus/security.h"
#include "common/config.h"
#include "common/logging.h"

namespace det::agent {

// agent.yaml, with Determined's field names where they exist.
struct AgentConfig {
  std::string master_host = "127.0.0.1";
  int master_port = 8091;  // the master's bus.agent_port
  std::string agent_id;    // default: this host's name
  std::string resource_pool = "default";
  int artificial_slots = 0;          // >0: report this many fake CPU slots (testing)
  int agent_reconnect_attempts = 5;  // failed joins in a row before giving up (0: never)
  Duration agent_reconnect_backoff = std::chrono::seconds(5);  // first delay; doubles, max 1m
  bus::AgentChannelConfig channel;  // heartbeat_interval (1s), master_silence_limit (5s)
  bus::SecurityConfig security;
  LogConfig log;
};

Result<AgentConfig> ParseAgentConfig(const YAML::Node& doc);

}  // namespace det::agent
