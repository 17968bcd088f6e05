#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/devices.h"
#include "bus/agent_channel.h"
#include "bus/backoff.h"
#include "bus/security.h"
#include "common/config.h"
#include "common/logging.h"

namespace det::agent {

// Where workloads whose start names an image run: kProcess, as processes like every other
// workload; kDocker, in containers of the Docker engine (docker_runtime.h).
enum class ContainerRuntime { kProcess, kDocker };
// "process" or "docker" (container_runtime's values); nullopt for anything else.
std::optional<ContainerRuntime> ContainerRuntimeNamed(const std::string& name);

// agent.yaml, with Determined's field names where they exist. Every top-level scalar can also be
// set by an environment variable DET_<NAME> (e.g. DET_MASTER_HOST), which a flag overrides.
struct AgentConfig {
  std::string master_host = "127.0.0.1";
  int master_port = 8091;  // the master's bus.agent_port
  std::string agent_id;    // default: this host's name
  std::string resource_pool = "default";
  DeviceConfig devices;              // slot_type, artificial_slots, visible_gpus
  std::string work_dir;              // workloads' folders; default /tmp/det-agent/<agent_id>
  int agent_reconnect_attempts = 5;  // failed joins in a row before giving up (0: never)
  Duration agent_reconnect_backoff = std::chrono::seconds(5);  // first delay; doubles, max 1m
  std::vector<std::string> on_connection_lost;              // hooks.on_connection_lost: argv to run
  Duration utilization_interval = std::chrono::seconds(5);  // how often slots are sampled
  bus::AgentChannelConfig channel;  // heartbeat_interval (1s), master_silence_limit (5s)
  bus::SecurityConfig security;
  LogConfig log;
  // `container_runtime`: "process" (default): workloads run as processes. "docker": a workload
  // whose experiment or command names an image (environment.image) runs in a container of the
  // Docker engine.
  ContainerRuntime container_runtime = ContainerRuntime::kProcess;
  // As root: the account of this host that a task runs as when the master names none for it (its
  // owner is not linked to one and master.yaml sets no security.default_task). Never root unless
  // written here; ignored by an agent that is not root (its tasks run as itself).
  std::string default_task_user = "nobody";
  // The cloud whose metadata service announces this machine's end ahead of time: "aws" (spot
  // interruption notices) or "gcp" (preemption); "": none. det-autoscaler's instances set it.
  std::string interruption_notice;
  Duration interruption_poll_interval = std::chrono::seconds(5);  // AWS's advice
  struct Docker {
    std::string socket = "/var/run/docker.sock";  // the engine's API
    std::string network_mode = "host";            // containers' network: host, bridge, a name
  } docker;
  // The master as containers reach it (Determined's fields): DET_MASTER's host and port inside
  // a container, where its network is not the host's ("": master's own host; 0: its own port).
  std::string container_master_host;
  int container_master_port = 0;
};

Result<AgentConfig> ParseAgentConfig(const YAML::Node& doc);
// Absolute, without "." or ".." parts or a trailing slash: workloads are found again by this path.
std::string NormalizedDir(const std::string& dir);
// The agent's id as given on the command line (--agent-id): when work_dir is the default
// (/tmp/det-agent/<id>), it follows the new id, so that agents on one machine (all named after its
// hostname until told otherwise) never share, and adopt, each other's workloads.
void OverrideAgentId(AgentConfig* config, const std::string& agent_id);
// ParseAgentConfig after ApplyAgentEnvironment with the process's environment.
Result<AgentConfig> ParseAgentConfigWithEnvironment(const YAML::Node& doc);

// Copies DET_<NAME> environment variables over the document's top-level scalars (names listed in
// kAgentEnvFields); `getenv` is injectable for tests.
void ApplyAgentEnvironment(YAML::Node& doc, const char* (*getenv)(const char*));
extern const std::vector<std::string> kAgentEnvFields;

}  // namespace det::agent
