#pragma once

// The `type: gcp` keys of a resource pool's `provider:` section, with Determined's names and
// defaults (https://docs.determined.ai/latest/reference/deploy/master-config-reference.html):
//
//   project                   the master's (metadata server), else the key's project_id or
//                             GOOGLE_CLOUD_PROJECT
//   zone                      the master's (metadata server)
//   boot_disk_size            200 (GB; at least 100)
//   boot_disk_source_image    the agent image (required: there is no public det-agent image)
//   boot_disk_type            pd-standard (a type or its URL; newer families such as C3, C4, N4
//                             and A3 need pd-balanced, pd-ssd or Hyperdisk)
//   label_key / label_value   managed-by / the cluster's id (Determined: the master's instance
//                             name): which instances are this cluster's
//   name_prefix               det-agent- (Determined: the master's name and "-"); instance
//                             names are the prefix and 8 random characters
//   labels                    {}: more labels on every instance
//   network_interface         network (projects/<project>/global/networks/default), subnetwork
//                             (projects/<project>/regions/<region>/subnetworks/default),
//                             external_ip (false)
//   network_tags              []
//   service_account           email (none), scopes ([cloud-platform] when an email is given)
//   instance_type             machine_type (n1-standard-32), gpu_type (nvidia-tesla-t4), gpu_num
//                             (4), preemptible (false); instance_slots defaults to gpu_num
//   cpu_slots_allowed         false: a GPU-less machine gives 1 CPU slot only when true
//   operation_timeout_period  5m: an insert not done by then counts as failed
// Beyond Determined: spot (false: Spot VMs, provisioning model SPOT, deleted when preempted),
// endpoint_url (another Compute Engine endpoint), spot_fallback (common), and how the agent starts
// on the instance (provider/agent_start.h).
//
// gpu_type and gpu_num default to the machine type's own GPUs for A2, A3, A4 and G2 machines and
// to none for other non-N1 ones, so `machine_type: e2-standard-8` alone means a CPU machine; an
// accelerator family not in the table (a newer one) needs them said.

#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "provider/agent_start.h"
#include "provider/provider_config.h"

namespace det::gcp {

struct GcpProviderConfig {
  std::string project;
  std::string zone;
  int boot_disk_size = 200;
  std::string boot_disk_source_image;
  std::string boot_disk_type = "pd-standard";
  std::string label_key = "managed-by";
  std::string label_value;
  std::string name_prefix = "det-agent-";
  std::map<std::string, std::string> labels;
  std::string network;     // "": the project's default network
  std::string subnetwork;  // "": the default network's subnetwork of the zone's region, or
                           // the given network's own choice
  bool external_ip = false;
  std::vector<std::string> network_tags;
  std::string service_account_email;
  std::vector<std::string> service_account_scopes;
  std::string machine_type = "n1-standard-32";
  std::string gpu_type = "nvidia-tesla-t4";
  int gpu_num = 4;
  bool preemptible = false;
  bool spot = false;
  bool cpu_slots_allowed = false;
  Duration operation_timeout_period = std::chrono::minutes(5);
  std::string spot_fallback = "none";
  std::string endpoint_url;
  provider::AgentStartConfig agent_start;

  // The network and subnetwork to use, defaults resolved against project and zone ("" for a
  // subnetwork: none is named).
  std::string Network() const;
  std::string Subnetwork() const;
};

// Reads the gcp keys of the section `reader` reads, recording errors on it (the master validates
// its master.yaml with this, the autoscaler builds the provider with it). `cluster_id` is
// label_value's default (made a valid label value).
GcpProviderConfig ReadGcpProviderConfig(ConfigReader& reader, const std::string& cluster_id);
// The same for a section on its own (errors name "provider.<field>").
Result<GcpProviderConfig> ReadGcpProviderConfig(const YAML::Node& provider,
                                                const std::string& cluster_id);

// Slots of one instance: its GPUs, else 1 CPU slot when cpu_slots_allowed, else 0. Reads only
// `instance_type` and `cpu_slots_allowed` of the section, without recording errors.
int32_t GcpInstanceSlots(const YAML::Node& provider);

// The `type: gcp` part of a provider section, for provider::ReadProviderConfig: its own keys
// checked, and an instance's slots from GcpInstanceSlots.
provider::SectionType GcpSection();

// `text` as a valid label value (lowercase letters, digits, '-' and '_', at most 63
// characters): itself when it is one, else its valid characters lowercased with a short hash of
// the original appended, so that different texts stay different.
std::string LabelValue(const std::string& text);

// "us-central1" of "us-central1-a".
std::string RegionOfZone(const std::string& zone);

}  // namespace det::gcp
