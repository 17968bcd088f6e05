#pragma once

// Agent instances on EC2 (`type: aws`): on-demand through RunInstances, spot through
// RequestSpotInstances. An instance is this pool's when it carries `tag_key: tag_value` and
// `determined-resource-pool: <pool>`; spot requests carry the same tags, and a fulfilled request's
// instance is tagged by List() (spot launch specifications cannot tag instances themselves).
//
// A request cancelled after it was fulfilled leaves its instance running: List() adopts it (it
// may run work) and the pool ends it by its rules. Spot requests are eventually consistent: one
// that DescribeSpotInstanceRequests does not show yet is still reported (as requested) for
// kSpotVisibilityGrace after it was made, and so is a fulfilled one whose instance
// DescribeInstances does not show yet. An instance whose request is marked for interruption
// (EC2's two-minute notice) is reported stopping, so its place is free for a replacement at once;
// EC2 then terminates it and it drops out of List(). With spot_fallback: on_demand, an open
// request EC2 reports short of capacity (capacity-not-available, capacity-oversubscribed,
// price-too-low) is cancelled and reported as a failed launch, so the pool falls back at once
// instead of waiting for it.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bus/catalog/autoscaler.h"
#include "cloud_aws/aws_config.h"
#include "cloud_aws/ec2_client.h"
#include "cloud_aws/user_data.h"
#include "provider/provider.h"
#include "provider/provider_config.h"

namespace det::aws {

inline constexpr const char* kPoolTag = "determined-resource-pool";
inline constexpr Duration kSpotVisibilityGrace = std::chrono::minutes(5);
inline constexpr size_t kMaxUserDataBytes = 16384;  // EC2's limit, before base64

class AwsProvider final : public provider::Provider {
 public:
  AwsProvider(AwsProviderConfig config, AgentBootstrap bootstrap, std::unique_ptr<Ec2Client> client,
              const Clock& clock);

  Result<std::vector<provider::Instance>> List(const std::string& resource_pool) override;
  provider::LaunchResult Launch(const provider::LaunchRequest& request) override;
  Status Terminate(const std::vector<std::string>& ids) override;
  std::vector<provider::Offering> Offerings() const override;
  std::vector<provider::LaunchOutcome> TakeLaunchOutcomes() override;

 private:
  struct UnseenSpotRequest {
    std::string resource_pool;
    provider::Offering offering;
    WallTime created_at;
  };
  std::vector<Ec2Tag> InstanceTags(const std::string& resource_pool) const;
  std::vector<Ec2Filter> PoolFilters(const std::string& resource_pool) const;
  Status ListSpotRequests(const std::string& resource_pool,
                          std::vector<provider::Instance>* instances);
  // Tags and reports the live instances of `fulfilled` requests (active ones, and those cancelled
  // after they were fulfilled: cancelling never ends an instance that may run work).
  Status AdoptSpotInstances(const std::string& resource_pool,
                            const std::vector<const SpotRequest*>& fulfilled,
                            std::vector<provider::Instance>* instances);
  // With spot_fallback: on_demand, open requests EC2 cannot fulfil for lack of capacity are
  // cancelled and become failed launch outcomes, so the pool launches on-demand meanwhile.
  void GiveUpSpotRequests(const std::vector<const SpotRequest*>& requests);
  Status TerminateInstances(const std::vector<std::string>& ids);
  Status CancelSpotRequests(const std::vector<std::string>& ids);
  // Closes the metadata service of a live instance to its containers once, when it is open (spot
  // instances are: their requests cannot say so). A refusal is logged, naming the permission.
  void CloseMetadataService(const Ec2Instance& instance);

  AwsProviderConfig config_;
  AgentBootstrap bootstrap_;
  std::unique_ptr<Ec2Client> client_;
  const Clock& clock_;
  std::map<std::string, UnseenSpotRequest> unseen_spot_;  // by spot request id
  std::set<std::string> dead_spot_instances_;  // of requests still listed: not looked up again
  std::map<std::string, WallTime> invisible_since_;  // fulfilled requests' unlisted instances
  std::set<std::string> metadata_asked_;  // instances whose metadata options we changed or tried
  std::vector<provider::LaunchOutcome> outcomes_;
};

// The provider for one pool's section: credentials from the AWS CLI's chain, the region from the
// section or the chain, the agent's master address from `master_host`/`master_port` or the
// master's own agent channel.
Result<std::unique_ptr<provider::Provider>> MakeAwsProvider(const provider::ProviderConfig& common,
                                                            const bus::PoolProviderEvent& pool,
                                                            const Clock& clock);

}  // namespace det::aws
