#pragma once

// The script a new cloud instance boots with (EC2 user data, Compute Engine's startup-script):
// it learns the instance's own id from the cloud's metadata service, runs the pool's
// `startup_script` (its failure stops the boot: no agent starts), runs `agent_install_command`
// if set, writes the agent's config and keys, and execs det-agent with the instance's id as its
// agent id, so that the autoscaler can match agent and instance.

#include <string>
#include <string_view>

#include "bus/catalog/autoscaler.h"
#include "common/status.h"
#include "provider/agent_start.h"
#include "provider/provider_config.h"

namespace det::provider {

// What the script writes on the instance.
struct AgentBootstrap {
  std::string master_host;
  int master_port = 0;
  std::string resource_pool;
  std::string startup_script;  // the pool's `startup_script`
  std::string agent_key;       // contents of agent_key_file ("" for none)
  std::string master_public_key;
};

// The bootstrap of `pool`'s agents: the master's address from master_host/master_port, else
// master_url's host, else the master's agent channel; the key files read (errors name the field).
Result<AgentBootstrap> MakeAgentBootstrap(const AgentStartConfig& start,
                                          const ProviderConfig& common,
                                          const bus::PoolProviderEvent& pool);

// The script. `agent_id_lines` are bash lines that set `agent_id` (they may use `$dir`, the
// agent's folder) and export where the cloud's metadata service is; `interruption_notice` ("aws",
// "gcp") has the agent watch it for the machine's end. Everything user-provided travels
// base64-encoded, so no quoting can break it.
// DET_AGENT_DIR (default /etc/determined) is read from the environment: a test harness that
// boots the script on this host sets it.
std::string AgentBootScript(const AgentStartConfig& start, const AgentBootstrap& bootstrap,
                            std::string_view agent_id_lines, std::string_view interruption_notice);

// Reads the key files `start` names into `bootstrap` (errors name the field).
Status LoadAgentKeys(const AgentStartConfig& start, AgentBootstrap* bootstrap);

// `text` in single quotes for bash.
std::string ShellQuote(std::string_view text);

}  // namespace det::provider
