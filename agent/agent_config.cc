#include "agent/agent_config.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "common/process.h"

namespace det::agent {

const std::vector<std::string> kAgentEnvFields = {"master_host",
                                                  "master_port",
                                                  "agent_id",
                                                  "resource_pool",
                                                  "slot_type",
                                                  "visible_gpus",
                                                  "artificial_slots",
                                                  "work_dir",
                                                  "agent_reconnect_attempts",
                                                  "agent_reconnect_backoff",
                                                  "utilization_interval",
                                                  "container_runtime",
                                                  "default_task_user",
                                                  "interruption_poll_interval",
                                                  "container_master_host",
                                                  "container_master_port"};

std::optional<ContainerRuntime> ContainerRuntimeNamed(const std::string& name) {
  if (name == "process") return ContainerRuntime::kProcess;
  if (name == "docker") return ContainerRuntime::kDocker;
  return std::nullopt;
}

std::string NormalizedDir(const std::string& dir) {
  std::string normal = std::filesystem::absolute(dir).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

namespace {

std::string DefaultWorkDir(const std::string& agent_id) { return "/tmp/det-agent/" + agent_id; }

constexpr const char* kSlotTypes[] = {"auto", "cuda", "cpu", "none"};
constexpr const char* kContainerRuntimes[] = {"process", "docker"};
constexpr const char* kInterruptionNotices[] = {"aws", "gcp"};

// visible_gpus: a list, or Determined's comma-separated string ("0,1" or "GPU-...,GPU-...").
void ReadVisibleGpus(const YAML::Node& doc, ConfigReader& reader, std::vector<std::string>* out) {
  if (!doc.IsMap() || !doc["visible_gpus"]) return;
  if (doc["visible_gpus"].IsSequence()) {
    reader.Read("visible_gpus", out);
    return;
  }
  std::string text;
  reader.Read("visible_gpus", &text);
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out->push_back(item);
  }
}

}  // namespace

void ApplyAgentEnvironment(YAML::Node& doc, const char* (*getenv)(const char*)) {
  for (const std::string& field : kAgentEnvFields) {
    std::string name = "DET_" + field;
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (const char* value = getenv(name.c_str()); value && *value) doc[field] = value;
  }
}

Result<AgentConfig> ParseAgentConfig(const YAML::Node& doc) {
  AgentConfig config;
  ConfigReader reader(doc);
  reader.Read("master_host", &config.master_host);
  reader.ReadPort("master_port", &config.master_port);
  reader.Read("agent_id", &config.agent_id);
  reader.Read("resource_pool", &config.resource_pool);
  reader.ReadOneOf("slot_type", &config.devices.slot_type, kSlotTypes);
  reader.ReadInt("artificial_slots", &config.devices.artificial_slots, 0, 1024);
  ReadVisibleGpus(doc, reader, &config.devices.visible_gpus);
  reader.Read("work_dir", &config.work_dir);
  reader.Read("default_task_user", &config.default_task_user);
  reader.ReadInt("agent_reconnect_attempts", &config.agent_reconnect_attempts, 0, 1000000);
  reader.Read("agent_reconnect_backoff", &config.agent_reconnect_backoff);
  reader.Read("utilization_interval", &config.utilization_interval);
  reader.Read("heartbeat_interval", &config.channel.heartbeat_interval);
  reader.Read("master_silence_limit", &config.channel.silence_limit);
  reader.Child("hooks").Read("on_connection_lost", &config.on_connection_lost);
  std::string container_runtime = "process";
  reader.ReadOneOf("container_runtime", &container_runtime, kContainerRuntimes);
  config.container_runtime =
      ContainerRuntimeNamed(container_runtime).value_or(ContainerRuntime::kProcess);
  reader.ReadOneOf("interruption_notice", &config.interruption_notice, kInterruptionNotices);
  reader.Read("interruption_poll_interval", &config.interruption_poll_interval);
  ConfigReader& docker = reader.Child("docker");
  docker.Read("socket", &config.docker.socket);
  docker.Read("network_mode", &config.docker.network_mode);
  reader.Read("container_master_host", &config.container_master_host);
  reader.ReadInt("container_master_port", &config.container_master_port, 0, 65535);
  config.security.Read(reader.Child("security"));
  ReadLogConfig(reader.Child("log"), &config.log);
  DET_RETURN_IF_ERROR(reader.Finish());
  if (config.agent_id.empty()) config.agent_id = HostName();
  if (config.work_dir.empty()) config.work_dir = DefaultWorkDir(config.agent_id);
  config.work_dir = NormalizedDir(config.work_dir);
  return config;
}

void OverrideAgentId(AgentConfig* config, const std::string& agent_id) {
  if (config->work_dir == NormalizedDir(DefaultWorkDir(config->agent_id))) {
    config->work_dir = NormalizedDir(DefaultWorkDir(agent_id));
  }
  config->agent_id = agent_id;
}

Result<AgentConfig> ParseAgentConfigWithEnvironment(const YAML::Node& doc) {
  YAML::Node copy = doc.IsNull() ? YAML::Node(YAML::NodeType::Map) : YAML::Clone(doc);
  ApplyAgentEnvironment(copy, [](const char* name) -> const char* { return std::getenv(name); });
  return ParseAgentConfig(copy);
}

}  // namespace det::agent
