// master.yaml's resource_manager, resource_pools and task_container_defaults: Determined's names
// and defaults, and an error naming the field for each bad value.
#include "master/cluster/resource_config.h"

#include <gtest/gtest.h>

#include "master/master_config.h"

namespace det::master {
namespace {

using scheduler::SchedulerConfig;

Result<MasterConfig> Parse(const std::string& yaml) {
  auto doc = ParseYaml(yaml, "master.yaml");
  if (!doc.ok()) return doc.status();
  return ParseMasterConfig(*doc);
}

TEST(ResourceConfigTest, DefaultsAreDeterminedsWithOneDefaultPool) {
  auto config = Parse("{}");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const ResourcesConfig& r = config->resources;
  ASSERT_EQ(r.resource_pools.size(), 1u);
  const ResourcePoolConfig& pool = r.resource_pools[0];
  EXPECT_EQ(pool.pool_name, "default");
  EXPECT_EQ(pool.scheduler.type, SchedulerConfig::Type::kPriority);
  EXPECT_EQ(pool.scheduler.fitting, SchedulerConfig::Fitting::kBest);
  EXPECT_FALSE(pool.scheduler.preemption);
  EXPECT_EQ(pool.scheduler.default_priority, 42);
  EXPECT_EQ(pool.max_aux_containers_per_agent, 100);
  EXPECT_EQ(pool.preemption_timeout, std::chrono::hours(1));
  EXPECT_FALSE(pool.provider.has_value());
  EXPECT_EQ(r.resource_manager.default_compute_resource_pool, "default");
  EXPECT_EQ(r.resource_manager.default_aux_resource_pool, "default");
}

TEST(ResourceConfigTest, PoolsTakeTheManagersSchedulerUnlessTheyHaveTheirOwn) {
  auto config = Parse(R"(
resource_manager:
  type: agent
  scheduler: {type: priority, preemption: true, default_priority: 30, fitting_policy: worst}
  default_aux_resource_pool: cpu
task_container_defaults: {preemption_timeout: 600}
resource_pools:
  - pool_name: gpu
    max_aux_containers_per_agent: 4
    agent_reconnect_wait: 10s
  - pool_name: cpu
    scheduler: {type: fair_share}
    task_container_defaults: {preemption_timeout: 2m}
    provider: {type: gcp, max_instances: 8, instance_type: {machine_type: n1-standard-8},
               boot_disk_source_image: projects/p/global/images/det-agent}
)");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const ResourcesConfig& r = config->resources;
  const ResourcePoolConfig& gpu = r.resource_pools[0];
  EXPECT_TRUE(gpu.scheduler.preemption);
  EXPECT_EQ(gpu.scheduler.default_priority, 30);
  EXPECT_EQ(gpu.scheduler.fitting, SchedulerConfig::Fitting::kWorst);
  EXPECT_EQ(gpu.max_aux_containers_per_agent, 4);
  EXPECT_EQ(gpu.agent_reconnect_wait, std::chrono::seconds(10));
  EXPECT_EQ(gpu.preemption_timeout, std::chrono::seconds(600));
  const ResourcePoolConfig& cpu = r.resource_pools[1];
  EXPECT_EQ(cpu.scheduler.type, SchedulerConfig::Type::kFairShare);
  EXPECT_FALSE(cpu.scheduler.preemption);  // its own scheduler, from defaults
  EXPECT_EQ(cpu.preemption_timeout, std::chrono::minutes(2));
  ASSERT_TRUE(cpu.provider.has_value());
  EXPECT_EQ(cpu.provider->max_instances, 8);
  EXPECT_EQ(cpu.provider->slots_per_instance, 4);  // gcp's gpu_num default
  EXPECT_EQ(cpu.provider->raw["instance_type"]["machine_type"].as<std::string>(), "n1-standard-8");
  EXPECT_EQ(r.resource_manager.default_compute_resource_pool, "gpu");  // no "default": the first
  EXPECT_EQ(r.resource_manager.default_aux_resource_pool, "cpu");
}

TEST(ResourceConfigTest, AwsSlotsComeFromTheInstanceTypeOrInstanceSlots) {
  auto config = Parse(R"(
resource_pools:
  - pool_name: a
    provider: {type: aws, image_id: ami-1, ssh_key_name: k, instance_type: p3.8xlarge}
  - pool_name: b
    provider: {type: aws, image_id: ami-1, ssh_key_name: k, instance_type: x9.huge,
               instance_slots: 2}
)");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->resources.resource_pools[0].provider->slots_per_instance, 4);
  EXPECT_EQ(config->resources.resource_pools[1].provider->slots_per_instance, 2);
}

TEST(ResourceConfigTest, GcpSlotsAreTheInstanceTypesGpus) {
  auto config = Parse(R"(
resource_pools:
  - pool_name: n1
    provider: {type: gcp, boot_disk_source_image: i,
               instance_type: {machine_type: n1-standard-8, gpu_type: nvidia-tesla-v100,
                               gpu_num: 8}}
  - pool_name: a2
    provider: {type: gcp, boot_disk_source_image: i, instance_type: {machine_type: a2-highgpu-2g}}
  - pool_name: cpu
    provider: {type: gcp, boot_disk_source_image: i, cpu_slots_allowed: true,
               instance_type: {machine_type: e2-standard-8}}
  - pool_name: none
    provider: {type: gcp, boot_disk_source_image: i, instance_type: {machine_type: c2-standard-4}}
)");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const auto& pools = config->resources.resource_pools;
  EXPECT_EQ(pools[0].provider->slots_per_instance, 8);
  EXPECT_EQ(pools[1].provider->slots_per_instance, 2);  // A2's own A100s
  EXPECT_EQ(pools[2].provider->slots_per_instance, 1);  // one CPU slot
  EXPECT_EQ(pools[3].provider->slots_per_instance, 0);
}

struct BadCase {
  const char* yaml;
  const char* error;  // a part of the message
};

class BadResourceConfigTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadResourceConfigTest, IsRefusedNamingTheField) {
  auto config = Parse(GetParam().yaml);
  ASSERT_FALSE(config.ok()) << GetParam().yaml;
  EXPECT_NE(config.status().message().find(GetParam().error), std::string::npos)
      << config.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadResourceConfigTest,
    ::testing::Values(
        BadCase{"resource_manager: {scheduler: {type: round_robin}}",
                "resource_manager.scheduler.type: \"round_robin\" is not allowed; allowed: "
                "priority, fair_share"},
        BadCase{"resource_manager: {scheduler: {fitting_policy: tight}}",
                "resource_manager.scheduler.fitting_policy"},
        BadCase{"resource_manager: {scheduler: {default_priority: 0}}",
                "resource_manager.scheduler.default_priority"},
        BadCase{"resource_manager: {type: kubernetes}", "resource_manager.type"},
        BadCase{"resource_manager: {default_compute_resource_pool: gpu}",
                "resource_manager.default_compute_resource_pool: \"gpu\" is not one of "
                "resource_pools (default)"},
        BadCase{"resource_pools: [{pool_name: a}, {pool_name: a}]",
                "resource_pools[1].pool_name: \"a\" names another pool too"},
        BadCase{"resource_pools: [{pool_name: a, scheduler: {type: fifo}}]",
                "resource_pools[0].scheduler.type"},
        BadCase{"resource_pools: [{pool_name: a, max_aux_containers_per_agent: -1}]",
                "resource_pools[0].max_aux_containers_per_agent"},
        BadCase{"resource_pools: [{pool_name: a, provider: {max_instances: 2}}]",
                "resource_pools[0].provider.type: is required"},
        BadCase{"resource_pools: [{pool_name: a, provider: {type: aws, max_instances: 0}}]",
                "resource_pools[0].provider.max_instances"},
        BadCase{"resource_pools: [{pool_name: a, provider: {type: gcp, min_instances: 3, "
                "max_instances: 2}}]",
                "resource_pools[0].provider.min_instances: must not exceed max_instances (2)"},
        BadCase{"resource_pools: [{pool_name: a, provider: {type: aws, instance_type: x1}}]",
                "resource_pools[0].provider.instance_slots: is required for instance_type "
                "\"x1\""},
        // The aws provider's own keys are checked by the master too.
        BadCase{"resource_pools: [{pool_name: a, provider: {type: aws, ssh_key_name: k}}]",
                "resource_pools[0].provider.image_id: is required"},
        BadCase{"resource_pools: [{pool_name: a, provider: {type: aws, image_id: i, "
                "ssh_key_name: k, spot_max_price: $1}}]",
                "resource_pools[0].provider.spot_max_price: \"$1\" is not a price"},
        // ... and the gcp provider's.
        BadCase{"resource_pools: [{pool_name: a, provider: {type: gcp}}]",
                "resource_pools[0].provider.boot_disk_source_image: is required"},
        BadCase{"resource_pools: [{pool_name: a, provider: {type: gcp, boot_disk_source_image: i, "
                "instance_type: {machine_type: e2-standard-4, gpu_num: 1}}}]",
                "resource_pools[0].provider.instance_type.gpu_num: GPUs attach only to N1"},
        BadCase{"task_container_defaults: {preemption_timeout: soon}",
                "task_container_defaults.preemption_timeout: \"soon\" is not seconds or a "
                "duration"}));

TEST(ResourceConfigTest, DistributedTrainingPortRangesAndRendezvousTimeout) {
  auto defaults = Parse("{}");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->resources.distributed.gloo_port_range.ToString(), "1024:65535");
  EXPECT_EQ(defaults->resources.distributed.rendezvous_timeout, std::chrono::minutes(5));
  auto config = Parse(
      "task_container_defaults: {gloo_port_range: \"29400:29499\", nccl_port_range: "
      "\"40000:40100\", rendezvous_timeout: 30}");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->resources.distributed.gloo_port_range.first, 29400);
  EXPECT_EQ(config->resources.distributed.nccl_port_range.ToString(), "40000:40100");
  EXPECT_EQ(config->resources.distributed.rendezvous_timeout, std::chrono::seconds(30));
  auto bad = Parse(
      "task_container_defaults: {gloo_port_range: \"2000:1000\", nccl_port_range: 5}\n"
      "resource_pools: [{pool_name: p, task_container_defaults: {gloo_port_range: \"1:2\"}}]");
  ASSERT_FALSE(bad.ok());
  const std::string& message = bad.status().message();
  EXPECT_NE(message.find("task_container_defaults.gloo_port_range: \"2000:1000\" is not a port "
                         "range \"MIN:MAX\" within 1..65535"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("task_container_defaults.nccl_port_range"), std::string::npos);
  EXPECT_NE(message.find("gloo_port_range: is set in master.yaml's task_container_defaults only"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace det::master
