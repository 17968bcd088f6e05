#include "cloud_aws/aws_config.h"

#include <algorithm>
#include <map>

#include "common/http_client.h"

namespace det::aws {
namespace {

// "2.50": digits with at most one decimal point, no currency sign (Determined's rule).
bool IsPrice(const std::string& text) {
  return !text.empty() && std::count(text.begin(), text.end(), '.') <= 1 && text != "." &&
         std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isdigit(c) || c == '.'; });
}

void ReadNetworkInterface(ConfigReader& reader, AwsProviderConfig* config) {
  ConfigReader& nic = reader.Child("network_interface");
  nic.Read("public_ip", &config->public_ip);
  nic.Read("subnet_id", &config->subnet_id);
  nic.Read("security_group_id", &config->security_group_id);
}

void ReadCustomTags(ConfigReader& reader, AwsProviderConfig* config) {
  for (ConfigReader* tag : reader.Items("custom_tags")) {
    Ec2Tag parsed;
    tag->Read("key", &parsed.key);
    tag->Read("value", &parsed.value);
    if (parsed.key.empty()) tag->Fail("key", "is required");
    // EC2 refuses a launch whose tags repeat a key: these are the provider's own.
    if (parsed.key == "Name" || parsed.key == config->tag_key ||
        parsed.key == "determined-resource-pool") {
      tag->Fail("key", "\"" + parsed.key + "\" is set by the provider itself (instance_name, " +
                           "tag_key, the pool tag)");
    }
    config->custom_tags.push_back(parsed);
  }
}

}  // namespace

AwsProviderConfig ReadAwsProviderConfig(ConfigReader& reader, const std::string& cluster_id) {
  AwsProviderConfig config;
  config.tag_value = cluster_id.empty() ? "determined-ai-determined" : cluster_id;
  reader.Read("region", &config.region);
  reader.Read("image_id", &config.image_id);
  reader.ReadInt("root_volume_size", &config.root_volume_size, 100, 65536);
  reader.Read("tag_key", &config.tag_key);
  reader.Read("tag_value", &config.tag_value);
  reader.Read("instance_name", &config.instance_name);
  reader.Read("ssh_key_name", &config.ssh_key_name);
  reader.Read("iam_instance_profile_arn", &config.iam_instance_profile_arn);
  reader.Read("instance_type", &config.instance_type);
  reader.Read("root_device_name", &config.root_device_name);
  reader.Read("cpu_slots_allowed", &config.cpu_slots_allowed);
  reader.Read("spot", &config.spot);
  reader.Read("spot_max_price", &config.spot_max_price);
  reader.Read("spot_fallback", &config.spot_fallback);
  reader.Read("endpoint_url", &config.endpoint_url);
  ReadNetworkInterface(reader, &config);
  ReadCustomTags(reader, &config);
  provider::ReadAgentStartConfig(reader, &config.agent_start);
  if (config.image_id.empty()) reader.Fail("image_id", "is required (the agent AMI)");
  if (config.ssh_key_name.empty()) {
    reader.Fail("ssh_key_name", "is required (an EC2 key pair name)");
  }
  if (config.tag_key.empty()) reader.Fail("tag_key", "must not be empty");
  if (config.tag_value.empty()) reader.Fail("tag_value", "must not be empty");
  if (!config.spot_max_price.empty() && !IsPrice(config.spot_max_price)) {
    reader.Fail("spot_max_price", "\"" + config.spot_max_price +
                                      "\" is not a price: digits and at most one decimal point, "
                                      "no currency sign (e.g. \"2.50\")");
  }
  if (!config.endpoint_url.empty() && !ParseUrl(config.endpoint_url).ok()) {
    reader.Fail("endpoint_url", ParseUrl(config.endpoint_url).status().message());
  }
  return config;
}

Result<AwsProviderConfig> ReadAwsProviderConfig(const YAML::Node& provider,
                                                const std::string& cluster_id) {
  ConfigReader reader(provider, "provider");
  reader.AllowOtherKeys();
  AwsProviderConfig config = ReadAwsProviderConfig(reader, cluster_id);
  DET_RETURN_IF_ERROR(reader.Finish());
  return config;
}

namespace {

int32_t AwsDefaultSlots(ConfigReader& reader) {
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

}  // namespace

provider::SectionType AwsSection() {
  // The tag default (the cluster id) does not matter for the check.
  return {"aws", AwsDefaultSlots, [](ConfigReader& reader) { ReadAwsProviderConfig(reader, ""); }};
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

}  // namespace det::aws
