#include "provider/agent_start.h"

namespace det::provider {

void ReadAgentStartConfig(ConfigReader& reader, AgentStartConfig* config) {
  reader.Read("agent_binary", &config->agent_binary);
  reader.Read("agent_install_command", &config->agent_install_command);
  reader.Read("agent_args", &config->agent_args);
  reader.Read("agent_key_file", &config->agent_key_file);
  reader.Read("master_public_key_file", &config->master_public_key_file);
  reader.Read("master_host", &config->master_host);
  reader.ReadPort("master_port", &config->master_port);
  if (config->agent_binary.empty()) reader.Fail("agent_binary", "must not be empty");
  if (config->agent_key_file.empty() != config->master_public_key_file.empty()) {
    reader.Fail(config->agent_key_file.empty() ? "agent_key_file" : "master_public_key_file",
                "is required with the other (the agents' CURVE key pair and the master's public "
                "key go together)");
  }
}

}  // namespace det::provider
