#include "provider/agent_bootstrap.h"

#include "common/base64.h"
#include "common/files.h"
#include "common/http_client.h"

namespace det::provider {
namespace {

// Lines that write `content` to `path` (mode `mode`) without quoting trouble; the file is the
// owner's only from the moment it exists (umask 077) until the chmod.
std::string WriteFileLine(const std::string& path, const std::string& content,
                          const std::string& mode) {
  return "(umask 077 && echo " + ShellQuote(Base64Encode(content)) + " | base64 -d > " + path +
         ")\nchmod " + mode + " " + path + "\n";
}

Result<std::string> ReadWholeFile(const std::string& path, const std::string& field) {
  std::optional<std::string> text = ReadFileText(path);
  if (!text) return InvalidArgument("provider." + field + ": cannot read " + path);
  return *text;
}

// The cloud's metadata service (169.254.169.254 on EC2 and Compute Engine alike) holds the
// instance's credentials; containers on bridge networks do not reach it. Docker passes their
// traffic through the chain DOCKER-USER before its own rules and keeps a chain made before it
// starts. (EC2 also refuses them by IMDSv2 and hop limit 1; a Compute Engine metadata server
// has no such setting.) DET_IPTABLES: tests' stand-in.
constexpr const char* kCloseMetadataToContainers =
    "iptables=\"${DET_IPTABLES:-iptables}\"\n"
    "if command -v \"$iptables\" >/dev/null 2>&1; then\n"
    "  \"$iptables\" -N DOCKER-USER 2>/dev/null || true\n"
    "  \"$iptables\" -C DOCKER-USER -d 169.254.169.254/32 -j REJECT 2>/dev/null ||\n"
    "    \"$iptables\" -I DOCKER-USER -d 169.254.169.254/32 -j REJECT ||\n"
    "    echo 'iptables refused the rule: containers on bridge networks reach the metadata "
    "service'\n"
    "else\n"
    "  echo 'no iptables: containers on bridge networks reach the metadata service'\n"
    "fi\n";

// `text` as a single-quoted YAML scalar.
std::string YamlQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::string ShellQuote(std::string_view text) {
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

Status LoadAgentKeys(const AgentStartConfig& start, AgentBootstrap* bootstrap) {
  if (start.agent_key_file.empty()) return Status::Ok();
  DET_ASSIGN_OR_RETURN(bootstrap->agent_key, ReadWholeFile(start.agent_key_file, "agent_key_file"));
  DET_ASSIGN_OR_RETURN(bootstrap->master_public_key,
                       ReadWholeFile(start.master_public_key_file, "master_public_key_file"));
  return Status::Ok();
}

Result<AgentBootstrap> MakeAgentBootstrap(const AgentStartConfig& start,
                                          const ProviderConfig& common,
                                          const bus::PoolProviderEvent& pool) {
  AgentBootstrap bootstrap;
  bootstrap.master_host = start.master_host;
  if (bootstrap.master_host.empty() && !common.master_url.empty()) {
    if (Result<UrlParts> url = ParseUrl(common.master_url); url.ok()) {
      bootstrap.master_host = url->host;
    }
  }
  if (bootstrap.master_host.empty()) bootstrap.master_host = pool.agent_host;
  bootstrap.master_port = start.master_port != 0 ? start.master_port : pool.agent_port;
  bootstrap.resource_pool = pool.resource_pool;
  bootstrap.startup_script = common.startup_script;
  DET_RETURN_IF_ERROR(LoadAgentKeys(start, &bootstrap));
  return bootstrap;
}

std::string AgentBootScript(const AgentStartConfig& start, const AgentBootstrap& bootstrap,
                            std::string_view agent_id_lines, std::string_view interruption_notice) {
  std::string script =
      "#!/bin/bash\n"
      "# Starts det-agent on this instance; written by det-autoscaler.\n"
      "set -euo pipefail\n"
      "dir=\"${DET_AGENT_DIR:-/etc/determined}\"\n"
      "mkdir -p \"$dir\"\n"
      "exec >> \"$dir/bootstrap.log\" 2>&1\n";
  script += agent_id_lines;
  script += "echo \"det-agent bootstrap of $agent_id\"\n";
  if (!bootstrap.startup_script.empty()) {
    script += WriteFileLine("\"$dir/startup.sh\"", bootstrap.startup_script, "700");
    script +=
        "\"$dir/startup.sh\" || { echo 'startup_script failed: det-agent not started'; "
        "exit 1; }\n";
  }
  if (!start.agent_install_command.empty()) {
    script += "bash -c " + ShellQuote(start.agent_install_command) +
              " || { echo 'agent_install_command failed: det-agent not started'; exit 1; }\n";
  }
  const std::string yaml =
      "master_host: " + YamlQuote(bootstrap.master_host) +
      "\nmaster_port: " + std::to_string(bootstrap.master_port) +
      "\nresource_pool: " + YamlQuote(bootstrap.resource_pool) + "\n" +
      (interruption_notice.empty()
           ? std::string()
           : "interruption_notice: " + std::string(interruption_notice) + "\n");
  script += WriteFileLine("\"$dir/agent.yaml\"", yaml, "600");  // root's: tasks run on this host
  if (!bootstrap.agent_key.empty()) {
    script += WriteFileLine("\"$dir/agent.key\"", bootstrap.agent_key, "600");
    script += WriteFileLine("\"$dir/master.pub\"", bootstrap.master_public_key, "644");
    script +=
        "printf 'security:\\n  key_file: \"%s\"\\n  server_public_key_file: \"%s\"\\n' "
        "\"$dir/agent.key\" \"$dir/master.pub\" >> \"$dir/agent.yaml\"\n";
  }
  script += kCloseMetadataToContainers;
  script += "exec " + ShellQuote(start.agent_binary) +
            " --config \"$dir/agent.yaml\" --agent-id \"$agent_id\"";
  for (const std::string& arg : start.agent_args) script += " " + ShellQuote(arg);
  script += " >> \"$dir/agent.log\" 2>&1\n";
  return script;
}

}  // namespace det::provider
