#include "agent/agent_config.h"

#include "common/process.h"

namespace det::agent {

Result<AgentConfig> ParseAgentConfig(const YAML::Node& doc) {
  AgentConfig config;
  ConfigReader reader(doc);
  reader.Read("master_host", &config.master_host);
  reader.ReadPort("master_port", &config.master_port);
  reader.Read("agent_id", &config.agent_id);
  reader.Read("resource_pool", &config.resource_pool);
  reader.ReadInt("artificial_slots", &config.artificial_slots, 0, 1024);
  reader.ReadInt("agent_reconnect_attempts", &config.agent_reconnect_attempts, 0, 1000000);
  reader.Read("agent_reconnect_backoff", &config.agent_reconnect_backoff);
  reader.Read("heartbeat_interval", &config.channel.heartbeat_interval);
  reader.Read("master_silence_limit", &config.channel.silence_limit);
  config.security.Read(reader.Child("security"));
  ReadLogConfig(reader.Child("log"), &config.log);
  DET_RETURN_IF_ERROR(reader.Finish());
  if (config.agent_id.empty()) config.agent_id = HostName();
  return config;
}

}  // namespace det::agent
