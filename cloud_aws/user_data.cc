#include "cloud_aws/user_data.h"

namespace det::aws {

std::string AgentUserData(const AwsProviderConfig& config, const AgentBootstrap& bootstrap) {
  static constexpr std::string_view kInstanceIdFromImds =
      "imds=\"${DET_IMDS_ENDPOINT:-http://169.254.169.254}\"\n"
      "token=$(curl -sSf --retry 5 --retry-connrefused -X PUT \"$imds/latest/api/token\" "
      "-H 'X-aws-ec2-metadata-token-ttl-seconds: 300' -H 'Content-Length: 0')\n"
      "agent_id=$(curl -sSf --retry 5 -H \"X-aws-ec2-metadata-token: $token\" "
      "\"$imds/latest/meta-data/instance-id\")\n"
      "export AWS_EC2_METADATA_SERVICE_ENDPOINT=\"$imds\"\n";
  return provider::AgentBootScript(config.agent_start, bootstrap, kInstanceIdFromImds, "aws");
}

}  // namespace det::aws
