#pragma once

// The user data a new EC2 agent instance boots with: provider/agent_bootstrap.h's script, with
// the instance id from IMDSv2 as the agent id.

#include <string>

#include "cloud_aws/aws_config.h"
#include "provider/agent_bootstrap.h"

namespace det::aws {

using provider::AgentBootstrap;

// DET_IMDS_ENDPOINT (default http://169.254.169.254) and DET_AGENT_DIR are read from the
// environment: a test harness that boots the script on this host sets them.
std::string AgentUserData(const AwsProviderConfig& config, const AgentBootstrap& bootstrap);

}  // namespace det::aws
