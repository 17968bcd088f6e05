// agent.yaml, its environment variables and flags, as the agent reads them.
#include "agent/agent_config.h"

#include <gtest/gtest.h>

#include "common/config.h"

namespace det {
namespace {

YAML::Node Yaml(const std::string& text) { return *ParseYaml(text, "test.yaml"); }

TEST(AgentConfigTest, ReadsDeterminedNames) {
  auto config = agent::ParseAgentConfig(
      Yaml("master_host: m\nmaster_port: 9\nagent_id: a\nagent_reconnect_attempts: 3\n"
           "agent_reconnect_backoff: 2s\nresource_pool: gpu\n"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->master_host, "m");
  EXPECT_EQ(config->agent_reconnect_backoff, std::chrono::seconds(2));
  EXPECT_EQ(config->resource_pool, "gpu");
}

// Instances of a cloud all share a hostname: the id they are given on the command line must take
// its default work folder with it, or two agents on one machine adopt each other's workloads.
TEST(AgentConfigTest, TheDefaultWorkFolderFollowsTheAgentIdGivenOnTheCommandLine) {
  auto defaulted = agent::ParseAgentConfig(Yaml("agent_id: vm\n"));
  ASSERT_TRUE(defaulted.ok()) << defaulted.status().ToString();
  EXPECT_EQ(defaulted->work_dir, "/tmp/det-agent/vm");
  agent::OverrideAgentId(&*defaulted, "i-0123");
  EXPECT_EQ(defaulted->agent_id, "i-0123");
  EXPECT_EQ(defaulted->work_dir, "/tmp/det-agent/i-0123");
  auto chosen = agent::ParseAgentConfig(Yaml("agent_id: vm\nwork_dir: /srv/det\n"));
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  agent::OverrideAgentId(&*chosen, "i-0123");
  EXPECT_EQ(chosen->work_dir, "/srv/det") << "a folder the config chose stays";
}

TEST(AgentConfigTest, EnvironmentOverridesTheFileAndVisibleGpusTakesBothForms) {
  auto doc = *ParseYaml("master_host: from-file\nvisible_gpus: \"0,GPU-abc\"\n", "agent.yaml");
  agent::ApplyAgentEnvironment(doc, [](const char* name) -> const char* {
    return std::string(name) == "DET_MASTER_HOST" ? "from-env" : nullptr;
  });
  auto config = agent::ParseAgentConfig(doc);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->master_host, "from-env");
  EXPECT_EQ(config->devices.visible_gpus, (std::vector<std::string>{"0", "GPU-abc"}));
  auto list = agent::ParseAgentConfig(*ParseYaml("visible_gpus: [1, 2]\nslot_type: cuda\n", "x"));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->devices.visible_gpus, (std::vector<std::string>{"1", "2"}));
  auto bad = agent::ParseAgentConfig(*ParseYaml("slot_type: tpu\n", "x"));
  EXPECT_NE(bad.status().message().find("slot_type"), std::string::npos);
}

// The config files' side of what config_yaml_fuzzer found: text that is not UTF-8 and aliases
// inside their own anchors are refused when the file is read, naming the file and the place.

}  // namespace
}  // namespace det
