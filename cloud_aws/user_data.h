#pragma once

// The user data a new agent instance boots with: a bash script that asks IMDSv2 for the instance
// id, runs the pool's `startup_script` (its failure stops the boot: no agent starts), runs
// `agent_install_command` if set, writes the agent's keys, and execs det-agent with the instance
// id as its agent id, so that the autoscaler can match agent and instance.

#include <string>

#include "cloud_aws/aws_config.h"
#include "common/status.h"

namespace det::aws {

struct AgentBootstrap {
  std::string master_host;
  int master_port = 0;
  std::string resource_pool;
  std::string startup_script;  // the pool's `startup_script`
  std::string agent_key;       // contents of agent_key_file ("" for none)
  std::string master_public_key;
};

// The script. Everything user-provided travels base64-encoded, so no quoting can break it.
// DET_IMDS_ENDPOINT (default http://169.254.169.254) and DET_AGENT_DIR (default /etc/determined)
// are read from the environment: a test harness that boots the script on this host sets them.
std::string AgentUserData(const AwsProviderConfig& config, const AgentBootstrap& bootstrap);

// Reads the key files the config names into `bootstrap` (errors name the field).
Status LoadAgentKeys(const AwsProviderConfig& config, AgentBootstrap* bootstrap);

// `text` in single quotes for bash.
std::string ShellQuote(const std::string& text);

}  // namespace det::aws
