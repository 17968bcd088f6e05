#pragma once

// How a cloud instance starts its det-agent: keys of a `type: aws` or `type: gcp` provider
// section beyond Determined's (whose agents always run its Docker image):
//
//   agent_binary            det-agent (installed on the image, or by agent_install_command)
//   agent_install_command   "": a shell command run after startup_script, before the agent
//   agent_args              []: more det-agent arguments
//   agent_key_file          "": the agents' CURVE key pair, written on the instance ...
//   master_public_key_file  "": ... with the master's public key (both or neither)
//   master_host             "": master_url's host, else the master's own agent channel address
//   master_port             0: the master's agent channel port

#include <string>
#include <vector>

#include "common/config.h"

namespace det::provider {

struct AgentStartConfig {
  std::string agent_binary = "det-agent";
  std::string agent_install_command;
  std::vector<std::string> agent_args;
  std::string agent_key_file;
  std::string master_public_key_file;
  std::string master_host;
  int master_port = 0;
};

// Reads those keys of the section `reader` reads, recording errors on it.
void ReadAgentStartConfig(ConfigReader& reader, AgentStartConfig* config);

}  // namespace det::provider
