#include "cloud_aws/user_data.h"

#include <fstream>
#include <sstream>

#include "cloud_aws/ec2_client.h"

namespace det::aws {
namespace {

// A line that writes `content` to `path` (mode `mode`) without quoting trouble.
std::string WriteFileLine(const std::string& path, const std::string& content,
                          const std::string& mode) {
  return "echo " + ShellQuote(Base64(content)) + " | base64 -d > " + path + "\nchmod " + mode +
         " " + path + "\n";
}

Result<std::string> ReadWholeFile(const std::string& path, const std::string& field) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("provider." + field + ": cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `text` as a single-quoted YAML scalar.
std::string YamlQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

Status LoadAgentKeys(const AwsProviderConfig& config, AgentBootstrap* bootstrap) {
  if (config.agent_key_file.empty()) return Status::Ok();
  DET_ASSIGN_OR_RETURN(bootstrap->agent_key,
                       ReadWholeFile(config.agent_key_file, "agent_key_file"));
  DET_ASSIGN_OR_RETURN(bootstrap->master_public_key,
                       ReadWholeFile(config.master_public_key_file, "master_public_key_file"));
  return Status::Ok();
}

std::string AgentUserData(const AwsProviderConfig& config, const AgentBootstrap& bootstrap) {
  std::string script =
      "#!/bin/bash\n"
      "# Starts det-agent on this instance; written by det-autoscaler.\n"
      "set -euo pipefail\n"
      "imds=\"${DET_IMDS_ENDPOINT:-http://169.254.169.254}\"\n"
      "dir=\"${DET_AGENT_DIR:-/etc/determined}\"\n"
      "mkdir -p \"$dir\"\n"
      "exec >> \"$dir/bootstrap.log\" 2>&1\n"
      "token=$(curl -sSf --retry 5 --retry-connrefused -X PUT \"$imds/latest/api/token\" "
      "-H 'X-aws-ec2-metadata-token-ttl-seconds: 300' -H 'Content-Length: 0')\n"
      "instance_id=$(curl -sSf --retry 5 -H \"X-aws-ec2-metadata-token: $token\" "
      "\"$imds/latest/meta-data/instance-id\")\n"
      "echo \"det-agent bootstrap of $instance_id\"\n";
  if (!bootstrap.startup_script.empty()) {
    script += WriteFileLine("\"$dir/startup.sh\"", bootstrap.startup_script, "700");
    script +=
        "\"$dir/startup.sh\" || { echo 'startup_script failed: det-agent not started'; "
        "exit 1; }\n";
  }
  if (!config.agent_install_command.empty()) {
    script += "bash -c " + ShellQuote(config.agent_install_command) +
              " || { echo 'agent_install_command failed: det-agent not started'; exit 1; }\n";
  }
  const std::string yaml = "master_host: " + YamlQuote(bootstrap.master_host) +
                           "\nmaster_port: " + std::to_string(bootstrap.master_port) +
                           "\nresource_pool: " + YamlQuote(bootstrap.resource_pool) + "\n";
  script += WriteFileLine("\"$dir/agent.yaml\"", yaml, "644");
  if (!bootstrap.agent_key.empty()) {
    script += WriteFileLine("\"$dir/agent.key\"", bootstrap.agent_key, "600");
    script += WriteFileLine("\"$dir/master.pub\"", bootstrap.master_public_key, "644");
    script +=
        "printf 'security:\\n  key_file: \"%s\"\\n  server_public_key_file: \"%s\"\\n' "
        "\"$dir/agent.key\" \"$dir/master.pub\" >> \"$dir/agent.yaml\"\n";
  }
  script += "exec " + ShellQuote(config.agent_binary) +
            " --config \"$dir/agent.yaml\" --agent-id \"$instance_id\"";
  for (const std::string& arg : config.agent_args) script += " " + ShellQuote(arg);
  script += " >> \"$dir/agent.log\" 2>&1\n";
  return script;
}

}  // namespace det::aws
