#include "cloud_aws/aws_provider.h"

#include <spdlog/spdlog.h>

#include <map>
#include <random>
#include <set>

#include "common/random_seed.h"

namespace det::aws {
namespace {

using provider::Instance;
using provider::InstanceState;
using provider::Offering;

InstanceState StateOf(const std::string& ec2_state) {
  if (ec2_state == "pending") return InstanceState::kStarting;
  if (ec2_state == "running") return InstanceState::kRunning;
  if (ec2_state == "stopping") return InstanceState::kStopping;
  if (ec2_state == "stopped") return InstanceState::kStopped;
  return InstanceState::kTerminated;
}

// 32 random hex digits: RunInstances/RequestSpotInstances idempotency (at most 64 ASCII).
std::string NewClientToken() {
  static thread_local std::mt19937_64 random{RandomSeed()};
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string token;
  for (int i = 0; i < 32; ++i) token += kDigits[random() % 16];
  return token;
}

bool IsSpotRequestId(const std::string& id) { return id.starts_with("sir-"); }

// EC2 will take the request's instance back (the two-minute interruption notice): the instance's
// place is free from now on, its replacement may start while it winds down.
bool MarkedForInterruption(const SpotRequest& request) {
  return request.status_code == "marked-for-termination" ||
         request.status_code == "marked-for-stop" ||
         request.status_code == "marked-for-hibernation";
}

// Status codes of open spot requests that EC2 cannot fulfil for now for lack of capacity at the
// price (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-request-status.html).
bool ShortOfCapacity(const SpotRequest& request) {
  return request.state == "open" && (request.status_code == "capacity-not-available" ||
                                     request.status_code == "capacity-oversubscribed" ||
                                     request.status_code == "price-too-low");
}

}  // namespace

AwsProvider::AwsProvider(AwsProviderConfig config, AgentBootstrap bootstrap,
                         std::unique_ptr<Ec2Client> client, const Clock& clock)
    : config_(std::move(config)),
      bootstrap_(std::move(bootstrap)),
      client_(std::move(client)),
      clock_(clock) {}

std::vector<Ec2Tag> AwsProvider::InstanceTags(const std::string& resource_pool) const {
  std::vector<Ec2Tag> tags = {{"Name", config_.instance_name},
                              {config_.tag_key, config_.tag_value},
                              {kPoolTag, resource_pool}};
  tags.insert(tags.end(), config_.custom_tags.begin(), config_.custom_tags.end());
  return tags;
}

std::vector<Ec2Filter> AwsProvider::PoolFilters(const std::string& resource_pool) const {
  return {{"tag:" + config_.tag_key, {config_.tag_value}},
          {std::string("tag:") + kPoolTag, {resource_pool}}};
}

Result<std::vector<Instance>> AwsProvider::List(const std::string& resource_pool) {
  std::vector<Ec2Filter> filters = PoolFilters(resource_pool);
  filters.push_back({"instance-state-name", {"pending", "running", "stopping", "stopped"}});
  Ec2Result<std::vector<Ec2Instance>> listed = client_->DescribeInstances(filters);
  if (!listed.ok()) return Unavailable(listed.error().ToString());
  std::vector<Instance> instances;
  std::set<std::string> live;
  for (const Ec2Instance& found : listed.value()) {
    instances.push_back({found.id, resource_pool, StateOf(found.state),
                         Offering{found.instance_type, found.zone, found.lifecycle == "spot"},
                         found.launch_time, found.spot_request_id});
    CloseMetadataService(found);
    live.insert(found.id);
  }
  std::erase_if(metadata_asked_, [&](const std::string& id) { return !live.contains(id); });
  if (config_.spot) DET_RETURN_IF_ERROR(ListSpotRequests(resource_pool, &instances));
  return instances;
}

Status AwsProvider::ListSpotRequests(const std::string& resource_pool,
                                     std::vector<Instance>* instances) {
  // Every state: open ones are capacity on the way, active ones may have an untagged instance,
  // cancelled ones may have left an instance running, failed and closed ones end their tracking.
  Ec2Result<std::vector<SpotRequest>> requests =
      client_->DescribeSpotInstanceRequests(PoolFilters(resource_pool));
  if (!requests.ok()) return Unavailable(requests.error().ToString());
  std::map<std::string, Instance*> listed;
  for (Instance& instance : *instances) listed[instance.id] = &instance;
  // Active, or cancelled after they were fulfilled: their instances, not tagged yet (perhaps
  // running work already), are the pool's.
  std::vector<const SpotRequest*> fulfilled;
  std::vector<const SpotRequest*> short_of_capacity;  // open, to be given up for on-demand
  std::set<std::string> referenced;
  for (const SpotRequest& request : requests.value()) {
    unseen_spot_.erase(request.id);
    referenced.insert(request.instance_id);
    if (ShortOfCapacity(request) && config_.spot_fallback == "on_demand") {
      short_of_capacity.push_back(&request);
      continue;
    }
    if (request.state == "open") {
      instances->push_back({request.id, resource_pool, InstanceState::kSpotRequested,
                            Offering{request.instance_type, request.zone, true},
                            request.create_time});
      continue;
    }
    if (auto instance = listed.find(request.instance_id); instance != listed.end()) {
      if (MarkedForInterruption(request) && instance->second->state != InstanceState::kStopped) {
        instance->second->state = InstanceState::kStopping;
      }
      continue;
    }
    if (request.instance_id.empty() || dead_spot_instances_.contains(request.instance_id)) {
      continue;
    }
    fulfilled.push_back(&request);
  }
  std::erase_if(dead_spot_instances_,
                [&](const std::string& id) { return !referenced.contains(id); });
  std::erase_if(invisible_since_,
                [&](const auto& entry) { return !referenced.contains(entry.first); });
  DET_RETURN_IF_ERROR(AdoptSpotInstances(resource_pool, fulfilled, instances));
  GiveUpSpotRequests(short_of_capacity);
  const WallTime now = clock_.WallNow();
  std::erase_if(unseen_spot_, [&](const auto& entry) {
    return now - entry.second.created_at > kSpotVisibilityGrace;
  });
  for (const auto& [id, unseen] : unseen_spot_) {
    if (unseen.resource_pool != resource_pool) continue;
    instances->push_back(
        {id, resource_pool, InstanceState::kSpotRequested, unseen.offering, unseen.created_at});
  }
  return Status::Ok();
}

void AwsProvider::GiveUpSpotRequests(const std::vector<const SpotRequest*>& requests) {
  std::vector<std::string> ids;
  for (const SpotRequest* request : requests) ids.push_back(request->id);
  if (ids.empty()) return;
  if (Status cancelled = CancelSpotRequests(ids); !cancelled.ok()) {
    spdlog::warn("cancelling {} spot request(s) short of capacity: {}", ids.size(),
                 cancelled.message());
    return;  // still open: listed again next time
  }
  for (const SpotRequest* request : requests) {
    outcomes_.push_back(
        {request->id, Offering{request->instance_type, request->zone, true},
         provider::ProviderError{provider::ProviderErrorKind::kCapacity,
                                 "spot request " + request->id + " is " + request->status_code +
                                     ": " + request->status_message}});
  }
}

std::vector<provider::LaunchOutcome> AwsProvider::TakeLaunchOutcomes() {
  std::vector<provider::LaunchOutcome> taken;
  taken.swap(outcomes_);
  return taken;
}

void AwsProvider::CloseMetadataService(const Ec2Instance& instance) {
  const InstanceState state = StateOf(instance.state);
  if (instance.MetadataClosedToContainers() || metadata_asked_.contains(instance.id) ||
      (state != InstanceState::kStarting && state != InstanceState::kRunning)) {
    return;
  }
  metadata_asked_.insert(instance.id);
  Ec2Result<bool> closed = client_->ModifyInstanceMetadataOptions(instance.id);
  if (closed.ok()) {
    spdlog::info("{}: metadata service closed to containers (IMDSv2 required, hop limit 1)",
                 instance.id);
  } else {
    spdlog::warn(
        "{}: its metadata service stays open to containers (tokens {}, hop limit {}), so they can "
        "read the instance role's credentials: {}",
        instance.id, instance.metadata_tokens.empty() ? "?" : instance.metadata_tokens,
        instance.metadata_hop_limit, closed.error().ToString());
  }
}

Status AwsProvider::AdoptSpotInstances(const std::string& resource_pool,
                                       const std::vector<const SpotRequest*>& fulfilled,
                                       std::vector<Instance>* instances) {
  if (fulfilled.empty()) return Status::Ok();
  // By id, not by tag (they have none yet): which of these instances still live.
  std::vector<std::string> ids;
  for (const SpotRequest* request : fulfilled) ids.push_back(request->instance_id);
  Ec2Result<std::vector<Ec2Instance>> found = client_->DescribeInstances({{"instance-id", ids}});
  if (!found.ok()) return Unavailable(found.error().ToString());
  std::map<std::string, const Ec2Instance*> alive;
  std::set<std::string> seen;
  for (const Ec2Instance& instance : found.value()) {
    seen.insert(instance.id);
    if (StateOf(instance.state) == InstanceState::kTerminated) continue;
    alive[instance.id] = &instance;
    CloseMetadataService(instance);
  }
  const WallTime now = clock_.WallNow();
  for (const SpotRequest* request : fulfilled) {
    const std::string& id = request->instance_id;
    if (seen.contains(id)) {
      invisible_since_.erase(id);
      if (!alive.contains(id)) dead_spot_instances_.insert(id);
      continue;
    }
    // EC2 fulfilled the request but does not list its instance yet (eventual consistency): the
    // request stands for it, as capacity on the way, for a while. An instance that never shows
    // (terminated and dropped from EC2's list long ago) is dead.
    const WallTime since = invisible_since_.try_emplace(id, now).first->second;
    if (now - since >= kSpotVisibilityGrace) {
      invisible_since_.erase(id);
      dead_spot_instances_.insert(id);
    } else if (request->state == "active") {
      instances->push_back({request->id, resource_pool, InstanceState::kSpotRequested,
                            Offering{request->instance_type, request->zone, true},
                            request->create_time});
    }
  }
  for (const SpotRequest* request : fulfilled) {
    auto it = alive.find(request->instance_id);
    if (it == alive.end()) continue;
    if (request->state != "active") {
      spdlog::info(
          "spot request {} was {} after it was fulfilled: its instance {} stays the pool's (ended "
          "when idle, or if its agent never comes)",
          request->id, request->state, request->instance_id);
    }
    Ec2Result<bool> tagged =
        client_->CreateTags({request->instance_id}, InstanceTags(resource_pool));
    if (!tagged.ok()) {
      spdlog::warn("tagging spot instance {} failed: {}", request->instance_id,
                   tagged.error().ToString());
    }
    const Ec2Instance& instance = *it->second;
    const InstanceState state =
        MarkedForInterruption(*request) ? InstanceState::kStopping : StateOf(instance.state);
    instances->push_back({instance.id, resource_pool, state,
                          Offering{instance.instance_type, instance.zone, true},
                          instance.launch_time, request->id});
  }
  return Status::Ok();
}

provider::LaunchResult AwsProvider::Launch(const provider::LaunchRequest& request) {
  provider::LaunchResult result;
  LaunchSpec spec{config_.image_id,
                  request.offering.instance_type.empty() ? config_.instance_type
                                                         : request.offering.instance_type,
                  config_.ssh_key_name,
                  config_.iam_instance_profile_arn,
                  config_.subnet_id,
                  config_.security_group_id,
                  config_.public_ip,
                  config_.root_volume_size,
                  config_.root_device_name,
                  request.offering.zone,
                  "",
                  InstanceTags(request.resource_pool)};
  AgentBootstrap bootstrap = bootstrap_;
  bootstrap.resource_pool = request.resource_pool;
  spec.user_data = AgentUserData(config_, bootstrap);
  if (spec.user_data.size() > kMaxUserDataBytes) {
    result.error = provider::ProviderError{
        provider::ProviderErrorKind::kInvalid,
        "the agent's user data is " + std::to_string(spec.user_data.size()) +
            " bytes; EC2 takes 16384 at most (before base64): shorten startup_script or "
            "agent_install_command"};
    return result;
  }
  const WallTime now = clock_.WallNow();
  if (request.offering.spot) {
    Ec2Result<std::vector<SpotRequest>> made = client_->RequestSpotInstances(
        spec, request.count, config_.spot_max_price, NewClientToken());
    if (!made.ok()) {
      result.error = {provider::ProviderErrorKindOf(made.error().kind), made.error().ToString()};
      return result;
    }
    for (const SpotRequest& spot : made.value()) {
      unseen_spot_[spot.id] = {request.resource_pool, request.offering, now};
      result.launched.push_back(
          {spot.id, request.resource_pool, InstanceState::kSpotRequested, request.offering, now});
    }
    return result;
  }
  Ec2Result<std::vector<Ec2Instance>> started =
      client_->RunInstances(spec, request.count, NewClientToken());
  if (!started.ok()) {
    result.error = {provider::ProviderErrorKindOf(started.error().kind),
                    started.error().ToString()};
    return result;
  }
  for (const Ec2Instance& instance : started.value()) {
    result.launched.push_back({instance.id, request.resource_pool, InstanceState::kStarting,
                               Offering{instance.instance_type, instance.zone, false},
                               instance.launch_time == WallTime{} ? now : instance.launch_time});
  }
  if (static_cast<int>(result.launched.size()) < request.count) {
    result.error = {provider::ProviderErrorKind::kCapacity,
                    "RunInstances started " + std::to_string(result.launched.size()) + " of " +
                        std::to_string(request.count) + " instances"};
  }
  return result;
}

Status AwsProvider::TerminateInstances(const std::vector<std::string>& ids) {
  if (ids.empty()) return Status::Ok();
  Ec2Result<std::vector<std::string>> done = client_->TerminateInstances(ids);
  if (done.ok()) return Status::Ok();
  if (done.error().kind != Ec2ErrorKind::kNotFound) return Unavailable(done.error().ToString());
  // One id is gone already (and EC2 refuses the whole batch): one at a time, ignoring those.
  for (const std::string& id : ids) {
    Ec2Result<std::vector<std::string>> one = client_->TerminateInstances({id});
    if (!one.ok() && one.error().kind != Ec2ErrorKind::kNotFound) {
      return Unavailable(one.error().ToString());
    }
  }
  return Status::Ok();
}

Status AwsProvider::CancelSpotRequests(const std::vector<std::string>& ids) {
  if (ids.empty()) return Status::Ok();
  for (const std::string& id : ids) unseen_spot_.erase(id);
  Ec2Result<std::vector<std::string>> cancelled = client_->CancelSpotInstanceRequests(ids);
  if (!cancelled.ok() && cancelled.error().kind != Ec2ErrorKind::kNotFound) {
    return Unavailable(cancelled.error().ToString());
  }
  if (!cancelled.ok()) {
    // One request is not visible (yet, or any more) and EC2 refuses the whole batch: one at a time.
    for (const std::string& id : ids) {
      Ec2Result<std::vector<std::string>> one = client_->CancelSpotInstanceRequests({id});
      if (!one.ok() && one.error().kind != Ec2ErrorKind::kNotFound) {
        return Unavailable(one.error().ToString());
      }
    }
  }
  // A request fulfilled since the last List (EC2's lists lag) has an instance that cancelling
  // leaves running, perhaps with work on it already: never terminated here. List adopts it
  // through its cancelled request, and the pool's rules apply to it like any other instance
  // (terminated when idle, or when its agent never comes).
  return Status::Ok();
}

Status AwsProvider::Terminate(const std::vector<std::string>& ids) {
  std::vector<std::string> requests;
  std::vector<std::string> instances;
  for (const std::string& id : ids) (IsSpotRequestId(id) ? requests : instances).push_back(id);
  DET_RETURN_IF_ERROR(CancelSpotRequests(requests));
  return TerminateInstances(instances);
}

std::vector<Offering> AwsProvider::Offerings() const {
  const Offering on_demand{config_.instance_type, "", false};
  if (!config_.spot) return {on_demand};
  const Offering spot{config_.instance_type, "", true};
  if (config_.spot_fallback == "on_demand") return {spot, on_demand};
  return {spot};
}

Result<std::unique_ptr<provider::Provider>> MakeAwsProvider(const provider::ProviderConfig& common,
                                                            const bus::PoolProviderEvent& pool,
                                                            const Clock& clock) {
  DET_ASSIGN_OR_RETURN(AwsProviderConfig config,
                       ReadAwsProviderConfig(common.raw, pool.cluster_id));
  config.spot_fallback = common.spot_fallback;
  const AwsEnvironment env = AwsEnvironment::Process();
  auto imds = std::make_shared<ImdsClient>(
      ImdsOptionsFromEnvironment([](const char* name) -> const char* { return std::getenv(name); }),
      clock);
  if (config.region.empty()) {
    DET_ASSIGN_OR_RETURN(config.region, ResolveRegion(env, imds.get()));
  }
  DET_ASSIGN_OR_RETURN(AgentBootstrap bootstrap,
                       provider::MakeAgentBootstrap(config.agent_start, common, pool));
  auto credentials = std::make_shared<CredentialsChain>(env, imds, clock);
  Ec2ClientOptions options;
  options.region = config.region;
  options.endpoint_url = config.endpoint_url;
  auto client = std::make_unique<Ec2Client>(options, std::move(credentials), clock);
  return std::unique_ptr<provider::Provider>(std::make_unique<AwsProvider>(
      std::move(config), std::move(bootstrap), std::move(client), clock));
}

}  // namespace det::aws
