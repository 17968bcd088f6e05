#pragma once

// The `type: aws` keys of a resource pool's `provider:` section, with Determined's names and
// defaults (https://docs.determined.ai/latest/reference/deploy/master-config-reference.html):
//
//   region                      the master's (instance identity document), else AWS_REGION/config
//   image_id                    the agent AMI (required: there is no public det-agent AMI)
//   root_volume_size            200 (GB; at least 100)
//   tag_key / tag_value         managed-by / the cluster's id: which instances are this cluster's
//   instance_name               determined-ai-agent (the Name tag)
//   ssh_key_name                required
//   network_interface           public_ip (true), subnet_id, security_group_id
//   iam_instance_profile_arn    the agents' role
//   instance_type               g4dn.metal; instance_slots from the table unless given
//   cpu_slots_allowed           false: a GPU-less type gives 1 CPU slot only when true
//   spot, spot_max_price        false, the on-demand price
//   custom_tags                 [{key, value}]
// Beyond Determined: endpoint_url (another EC2 endpoint), spot_fallback (common), and how the
// agent starts on the instance (provider/agent_start.h).

#include <string>
#include <vector>

#include "common/config.h"
#include "provider/agent_start.h"
#include "provider/provider_config.h"

namespace det::aws {

// An EC2 tag (key, value), as custom_tags lists them and as EC2 returns them.
struct Ec2Tag {
  std::string key;
  std::string value;
  bool operator==(const Ec2Tag&) const = default;
};

struct AwsProviderConfig {
  std::string region;
  std::string image_id;
  int root_volume_size = 200;
  std::string root_device_name = "/dev/sda1";  // * the AMI's root device (Amazon Linux: /dev/xvda)
  std::string tag_key = "managed-by";
  std::string tag_value;
  std::string instance_name = "determined-ai-agent";
  std::string ssh_key_name;
  bool public_ip = true;
  std::string subnet_id;
  std::string security_group_id;
  std::string iam_instance_profile_arn;
  std::string instance_type = "g4dn.metal";
  bool cpu_slots_allowed = false;
  bool spot = false;
  std::string spot_max_price;  // "" = on-demand price
  std::string spot_fallback = "none";
  std::vector<Ec2Tag> custom_tags;
  std::string endpoint_url;
  provider::AgentStartConfig agent_start;  // the agent on the instance
};

// Reads the aws keys of the section `reader` reads, recording errors on it (the master validates
// its master.yaml with this, the autoscaler builds the provider with it). `cluster_id` is
// tag_value's default.
AwsProviderConfig ReadAwsProviderConfig(ConfigReader& reader, const std::string& cluster_id);
// The same for a section on its own (errors name "provider.<field>").
Result<AwsProviderConfig> ReadAwsProviderConfig(const YAML::Node& provider,
                                                const std::string& cluster_id);

// The `type: aws` part of a provider section, for provider::ReadProviderConfig: its own keys
// checked, and an instance's slots by `instance_type` (AwsInstanceSlots; a GPU-less type gives
// one CPU slot with `cpu_slots_allowed`, Determined's rule).
provider::SectionType AwsSection();

// GPUs of the AWS GPU instance types Determined's docs use (and newer ones), 0 for the CPU-only
// families Determined allows (t2, t3, c4, c5, m4, m5 and variants); -1 when unknown.
int32_t AwsInstanceSlots(const std::string& instance_type);

}  // namespace det::aws
