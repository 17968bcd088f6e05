#include "autoscaler/provider_config.h"

#include <map>

#include "cloud_aws/aws_config.h"
#include "cloud_gcp/gcp_config.h"

namespace det::autoscaler {
namespace {

constexpr const char* kProviderTypes[] = {"aws", "gcp", "local"};
constexpr const char* kSpotFallbacks[] = {"none", "on_demand"};

int32_t DefaultSlots(ConfigReader& reader, const std::string& type) {
  if (type == "gcp") return gcp::GcpInstanceSlots(reader.node());
  if (type != "aws") return 0;
  std::string instance_type = "g4dn.metal";
  reader.Read("instance_type", &instance_type);
  bool cpu_slots_allowed = false;
  reader.Read("cpu_slots_allowed", &cpu_slots_allowed);
  const int32_t slots = AwsInstanceSlots(instance_type);
  if (slots < 0) {
    reader.Fail("instance_slots", "is required for instance_type \"" + instance_type +
                                      "\" (its GPU count is not known)");
  }
  // Determined's rule: a GPU-less instance gives one CPU slot when cpu_slots_allowed.
  if (slots == 0 && cpu_slots_allowed) return 1;
  return std::max(slots, 0);
}

void ReadPeriods(ConfigReader& reader, ProviderConfig* config) {
  reader.Read("max_idle_agent_period", &config->max_idle_agent_period);
  reader.Read("max_agent_starting_period", &config->max_agent_starting_period);
  reader.Read("max_disconnected_period", &config->max_disconnected_period);
  reader.Read("launch_error_timeout", &config->launch_error_timeout);
  reader.Read("launch_batch_window", &config->launch_batch_window);
  for (auto [key, value] : {std::pair{"max_idle_agent_period", config->max_idle_agent_period},
                            {"max_agent_starting_period", config->max_agent_starting_period},
                            {"max_disconnected_period", config->max_disconnected_period},
                            {"launch_error_timeout", config->launch_error_timeout},
                            {"launch_batch_window", config->launch_batch_window}}) {
    if (value < Duration::zero()) reader.Fail(key, "must not be negative");
  }
}

}  // namespace

ProviderConfig ReadProviderConfig(ConfigReader& reader) {
  ProviderConfig config;
  reader.AllowOtherKeys();
  config.raw = reader.node();
  reader.ReadOneOf("type", &config.type, kProviderTypes);
  if (config.type.empty()) reader.Fail("type", "is required (one of aws, gcp, local)");
  reader.ReadInt("max_instances", &config.max_instances, 1, 100000);
  reader.ReadInt("min_instances", &config.min_instances, 0, 100000);
  if (config.min_instances > config.max_instances) {
    reader.Fail("min_instances",
                "must not exceed max_instances (" + std::to_string(config.max_instances) + ")");
  }
  int slots = -1;
  reader.ReadInt("instance_slots", &slots, 0, 4096);
  config.slots_per_instance = slots >= 0 ? slots : DefaultSlots(reader, config.type);
  ReadPeriods(reader, &config);
  reader.ReadInt("launch_error_retries", &config.launch_error_retries, 0, 1000);
  reader.ReadInt("max_launches_per_minute", &config.max_launches_per_minute, 1, 100000);
  reader.ReadOneOf("spot_fallback", &config.spot_fallback, kSpotFallbacks);
  reader.ReadInt("circuit_breaker_threshold", &config.circuit_breaker_threshold, 0, 100000);
  reader.Read("startup_script", &config.startup_script);
  reader.Read("master_url", &config.master_url);
  // The provider's own keys are checked here too, so a bad section stops det-master at start
  // instead of only the autoscaler's pool (the tag default does not matter for that).
  if (config.type == "aws") aws::ReadAwsProviderConfig(reader, "");
  if (config.type == "gcp") gcp::ReadGcpProviderConfig(reader, "");
  return config;
}

int32_t AwsInstanceSlots(const std::string& instance_type) {
  static const std::map<std::string, int32_t> kGpus = {
      {"g4dn.xlarge", 1},   {"g4dn.2xlarge", 1},  {"g4dn.4xlarge", 1},  {"g4dn.8xlarge", 1},
      {"g4dn.16xlarge", 1}, {"g4dn.12xlarge", 4}, {"g4dn.metal", 8},    {"g5.xlarge", 1},
      {"g5.2xlarge", 1},    {"g5.4xlarge", 1},    {"g5.8xlarge", 1},    {"g5.16xlarge", 1},
      {"g5.12xlarge", 4},   {"g5.24xlarge", 4},   {"g5.48xlarge", 8},   {"g6.xlarge", 1},
      {"g6.12xlarge", 4},   {"g6.48xlarge", 8},   {"p2.xlarge", 1},     {"p2.8xlarge", 8},
      {"p2.16xlarge", 16},  {"p3.2xlarge", 1},    {"p3.8xlarge", 4},    {"p3.16xlarge", 8},
      {"p3dn.24xlarge", 8}, {"p4d.24xlarge", 8},  {"p4de.24xlarge", 8}, {"p5.48xlarge", 8},
  };
  // The general-purpose and compute families Determined allows as CPU-only agents.
  static const char* const kCpuFamilies[] = {"t2.",  "t3.",  "c4.",  "c5.",   "c5d.", "c5n.",
                                             "m4.",  "m5.",  "m5d.", "m5dn.", "m5n.", "m5zn.",
                                             "c6i.", "m6i.", "c7i.", "m7i."};
  if (auto it = kGpus.find(instance_type); it != kGpus.end()) return it->second;
  for (const char* family : kCpuFamilies) {
    if (instance_type.starts_with(family)) return 0;
  }
  return -1;
}

}  // namespace det::autoscaler
