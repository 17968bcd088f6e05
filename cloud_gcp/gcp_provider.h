#pragma once

// Agent instances on Compute Engine (`type: gcp`), standard, Spot or preemptible VMs, in the
// pool's zone. An instance is this pool's when it carries the labels `label_key: label_value` and
// `determined-resource-pool: <pool>` (as a label value); its name is its id and its agent's id.
//
// Desired state: the instances the pool scaler launched and has not terminated. Actual state:
// what instances.list shows, plus inserts whose operation has not finished (reported as
// starting). An insert is accepted at once and runs as an operation: List() polls each pending
// one, and an operation that ends with an error (ZONE_RESOURCE_POOL_EXHAUSTED, QUOTA_EXCEEDED,
// ...) or does not end within operation_timeout_period becomes a failed LaunchOutcome, classified
// for the launch gate (Determined only logs these). Compute Engine refuses to delete an instance
// its insert is still creating (404, or 400 resourceNotReady): an instance terminated then, or
// whose insert timed out, is deleted once the insert is done, and a delete refused as not ready
// is asked again at every List(); such instances are listed as stopping meanwhile.
//
// A preempted Spot VM is deleted by Compute Engine (instanceTerminationAction DELETE) and drops
// out of the list; a preempted preemptible VM stays TERMINATED, which the decider terminates:
// both are lost capacity to the pool, which launches again if the work still needs it.

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bus/catalog/autoscaler.h"
#include "cloud_gcp/compute_client.h"
#include "cloud_gcp/gcp_config.h"
#include "provider/agent_bootstrap.h"
#include "provider/provider.h"
#include "provider/provider_config.h"

namespace det::gcp {

inline constexpr const char* kPoolLabel = "determined-resource-pool";

using provider::AgentBootstrap;

class GcpProvider final : public provider::Provider {
 public:
  // `config.project` and `config.zone` must be resolved.
  GcpProvider(GcpProviderConfig config, AgentBootstrap bootstrap,
              std::unique_ptr<ComputeClient> client, const Clock& clock);

  Result<std::vector<provider::Instance>> List(const std::string& resource_pool) override;
  provider::LaunchResult Launch(const provider::LaunchRequest& request) override;
  Status Terminate(const std::vector<std::string>& ids) override;
  std::vector<provider::Offering> Offerings() const override;
  std::vector<provider::LaunchOutcome> TakeLaunchOutcomes() override;

  // The Instance resource instances.insert is sent for `name` (exposed for tests).
  nlohmann::json InstanceResource(const std::string& name, const std::string& resource_pool,
                                  const provider::Offering& offering) const;

 private:
  struct PendingInsert {
    std::string operation;
    std::string resource_pool;
    provider::Offering offering;
    WallTime inserted_at{};
    MonoTime deadline{};
    bool delete_when_done = false;
    bool outcome_reported = false;  // failed for the pool already (timed out)
  };
  std::string PoolFilter(const std::string& resource_pool) const;
  std::string ZonePath() const;  // "zones/<zone>/"
  nlohmann::json BootDisk() const;
  nlohmann::json NetworkInterface() const;
  nlohmann::json Scheduling(const provider::Offering& offering) const;
  // Polls the pool's pending inserts, turning finished (or timed-out) ones into outcomes.
  void PollInserts(const std::string& resource_pool);
  void PollInsert(const std::string& name);
  // The insert of `name` ended (`error` empty: created).
  void Finish(const std::string& name, std::optional<provider::ProviderError> error);
  // Deletes `name`; gone already is fine, not ready yet is asked again later.
  Status DeleteInstance(const std::string& name);
  void DeleteLater(const std::string& name);
  void RetryDeletes();
  bool Terminating(const std::string& name) const;

  GcpProviderConfig config_;
  AgentBootstrap bootstrap_;
  std::unique_ptr<ComputeClient> client_;
  const Clock& clock_;
  std::map<std::string, PendingInsert> inserts_;  // by instance name
  std::set<std::string> deletes_due_;             // deletes refused as not ready yet
  std::vector<provider::LaunchOutcome> outcomes_;
};

// The startup-script an instance boots with: provider/agent_bootstrap.h's script, with the
// instance's name from the metadata server as the agent id. DET_GCE_METADATA_HOST (default
// metadata.google.internal; a path may follow the host) and DET_AGENT_DIR are read from the
// environment: a test harness that boots the script on this host sets them.
std::string AgentStartupScript(const GcpProviderConfig& config, const AgentBootstrap& bootstrap);

// The provider for one pool's section: credentials from Application Default Credentials, the
// project and zone from the section, the credentials or the metadata server.
Result<std::unique_ptr<provider::Provider>> MakeGcpProvider(const provider::ProviderConfig& common,
                                                            const bus::PoolProviderEvent& pool,
                                                            const Clock& clock);

}  // namespace det::gcp
