#include "cloud_gcp/gcp_provider.h"

#include <spdlog/spdlog.h>

#include <random>
#include <set>

namespace det::gcp {
namespace {

using provider::Instance;
using provider::InstanceState;
using provider::LaunchOutcome;
using provider::Offering;
using provider::ProviderError;
using provider::ProviderErrorKind;

InstanceState StateOf(const std::string& status) {
  if (status == "PROVISIONING" || status == "STAGING") return InstanceState::kStarting;
  if (status == "RUNNING" || status == "REPAIRING") return InstanceState::kRunning;
  if (status == "STOPPING" || status == "SUSPENDING") return InstanceState::kStopping;
  return InstanceState::kStopped;  // TERMINATED (a stopped or preempted VM), SUSPENDED
}

// 8 random lowercase letters and digits: the part of an instance name after name_prefix.
std::string RandomSuffix() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string suffix;
  for (int i = 0; i < 8; ++i) suffix += kChars[random() % 36];
  return suffix;
}

ProviderError ErrorOf(const GceError& error) {
  return {provider::ProviderErrorKindOf(error.kind), error.ToString()};
}

// "key = value" for the list filter, quoted as the filter syntax wants.
std::string LabelTerm(const std::string& key, const std::string& value) {
  return "(labels." + key + " = \"" + value + "\")";
}

}  // namespace

std::string AgentStartupScript(const GcpProviderConfig& config, const AgentBootstrap& bootstrap) {
  static constexpr std::string_view kNameFromMetadata =
      "metadata=\"${DET_GCE_METADATA_HOST:-metadata.google.internal}\"\n"
      "agent_id=$(curl -sSf --retry 5 --retry-connrefused -H 'Metadata-Flavor: Google' "
      "\"http://$metadata/computeMetadata/v1/instance/name\")\n"
      "export GCE_METADATA_HOST=\"$metadata\"\n";
  return provider::AgentBootScript(config.agent_start, bootstrap, kNameFromMetadata, "gcp");
}

GcpProvider::GcpProvider(GcpProviderConfig config, AgentBootstrap bootstrap,
                         std::unique_ptr<ComputeClient> client, const Clock& clock)
    : config_(std::move(config)),
      bootstrap_(std::move(bootstrap)),
      client_(std::move(client)),
      clock_(clock) {}

std::string GcpProvider::PoolFilter(const std::string& resource_pool) const {
  return LabelTerm(config_.label_key, config_.label_value) + " " +
         LabelTerm(kPoolLabel, LabelValue(resource_pool));
}

nlohmann::json GcpProvider::InstanceResource(const std::string& name,
                                             const std::string& resource_pool,
                                             const Offering& offering) const {
  nlohmann::json labels = config_.labels;
  labels[config_.label_key] = config_.label_value;
  labels[kPoolLabel] = LabelValue(resource_pool);
  AgentBootstrap bootstrap = bootstrap_;
  bootstrap.resource_pool = resource_pool;
  nlohmann::json resource = {
      {"name", name},
      {"machineType", ZonePath() + "machineTypes/" + offering.instance_type},
      {"labels", labels},
      {"metadata",
       {{"items",
         {{{"key", "startup-script"}, {"value", AgentStartupScript(config_, bootstrap)}},
          {{"key", kPoolLabel}, {"value", resource_pool}}}}}},
      {"disks", {BootDisk()}},
      {"networkInterfaces", {NetworkInterface()}},
      {"scheduling", Scheduling(offering)},
  };
  if (!config_.network_tags.empty()) resource["tags"] = {{"items", config_.network_tags}};
  if (!config_.service_account_email.empty()) {
    resource["serviceAccounts"] = {
        {{"email", config_.service_account_email}, {"scopes", config_.service_account_scopes}}};
  }
  // A2, A3, A4 and G2 machines come with their GPUs; only N1 machines have them attached.
  const bool attached = config_.gpu_num > 0 && (offering.instance_type.starts_with("n1-") ||
                                                offering.instance_type.starts_with("custom-"));
  if (attached) {
    resource["guestAccelerators"] = {
        {{"acceleratorType", ZonePath() + "acceleratorTypes/" + config_.gpu_type},
         {"acceleratorCount", config_.gpu_num}}};
  }
  return resource;
}

std::string GcpProvider::ZonePath() const { return "zones/" + config_.zone + "/"; }

nlohmann::json GcpProvider::BootDisk() const {
  return {{"boot", true},
          {"autoDelete", true},
          {"initializeParams",
           {{"sourceImage", config_.boot_disk_source_image},
            {"diskSizeGb", std::to_string(config_.boot_disk_size)},
            {"diskType", ZonePath() + "diskTypes/" + config_.boot_disk_type}}}};
}

nlohmann::json GcpProvider::NetworkInterface() const {
  nlohmann::json nic = {{"network", config_.Network()}};
  if (!config_.Subnetwork().empty()) nic["subnetwork"] = config_.Subnetwork();
  if (config_.external_ip) {
    nic["accessConfigs"] = {
        {{"type", "ONE_TO_ONE_NAT"}, {"name", "External NAT"}, {"networkTier", "PREMIUM"}}};
  }
  return nic;
}

nlohmann::json GcpProvider::Scheduling(const Offering& offering) const {
  // GPUs cannot live-migrate; a Spot or preemptible VM is not restarted after preemption.
  nlohmann::json scheduling = {{"onHostMaintenance", "TERMINATE"},
                               {"automaticRestart", !offering.spot}};
  if (offering.spot && config_.spot) {
    scheduling["provisioningModel"] = "SPOT";
    scheduling["instanceTerminationAction"] = "DELETE";
  } else if (offering.spot) {
    scheduling["preemptible"] = true;
  }
  return scheduling;
}

Result<std::vector<Instance>> GcpProvider::List(const std::string& resource_pool) {
  // Inserts first: one that finishes now is then in the list rather than in neither.
  PollInserts(resource_pool);
  RetryDeletes();
  GceResult<std::vector<GceInstance>> listed =
      client_->ListInstances(config_.zone, PoolFilter(resource_pool));
  if (!listed.ok()) return Unavailable(listed.error().ToString());
  std::vector<Instance> instances;
  std::set<std::string> names;
  for (const GceInstance& found : listed.value()) {
    names.insert(found.name);
    const bool spot = found.preemptible || found.provisioning_model == "SPOT";
    instances.push_back({found.name, resource_pool, StateOf(found.status),
                         Offering{found.machine_type, found.zone, spot}, found.created_at});
    if (Terminating(found.name)) instances.back().state = InstanceState::kStopping;
  }
  for (const auto& [name, insert] : inserts_) {
    if (insert.resource_pool != resource_pool || names.contains(name)) continue;
    instances.push_back({name, resource_pool,
                         Terminating(name) ? InstanceState::kStopping : InstanceState::kStarting,
                         insert.offering, insert.inserted_at});
  }
  return instances;
}

bool GcpProvider::Terminating(const std::string& name) const {
  auto insert = inserts_.find(name);
  return deletes_due_.contains(name) ||
         (insert != inserts_.end() && insert->second.delete_when_done);
}

void GcpProvider::PollInserts(const std::string& resource_pool) {
  std::vector<std::string> names;
  for (const auto& [name, insert] : inserts_) {
    if (insert.resource_pool == resource_pool) names.push_back(name);
  }
  for (const std::string& name : names) PollInsert(name);
}

void GcpProvider::PollInsert(const std::string& name) {
  PendingInsert& insert = inserts_.at(name);
  GceResult<GceOperation> operation = client_->GetOperation(config_.zone, insert.operation);
  if (operation.ok() && operation.value().done()) {
    std::optional<ProviderError> error;
    if (operation.value().error) error = ErrorOf(*operation.value().error);
    Finish(name, error);
    return;
  }
  if (!operation.ok() && operation.error().kind == GceErrorKind::kNotFound) {
    // The operation is not kept any more: whether the instance exists tells how it ended.
    GceResult<GceInstance> instance = client_->GetInstance(config_.zone, name);
    if (instance.ok() || instance.error().kind != GceErrorKind::kNotFound) {
      Finish(name, std::nullopt);
    } else {
      Finish(name, ProviderError{ProviderErrorKind::kTransient,
                                 "the insert of " + name + " ended without creating it"});
    }
    return;
  }
  if (clock_.Now() >= insert.deadline && !insert.outcome_reported) {
    // Failed for the pool now; the instance, if the insert still makes it, goes when it is done.
    spdlog::warn("gcp: insert of {} not done within operation_timeout_period; it will be deleted",
                 name);
    insert.outcome_reported = true;
    insert.delete_when_done = true;
    outcomes_.push_back({name, insert.offering,
                         ProviderError{ProviderErrorKind::kTransient,
                                       "compute.instances.insert of " + name +
                                           " did not finish within operation_timeout_period"}});
  }
}

void GcpProvider::Finish(const std::string& name, std::optional<ProviderError> error) {
  auto it = inserts_.find(name);
  if (it == inserts_.end()) return;
  const PendingInsert insert = it->second;
  inserts_.erase(it);
  if (!error && insert.delete_when_done) DeleteLater(name);
  if (!insert.outcome_reported) outcomes_.push_back({name, insert.offering, std::move(error)});
}

provider::LaunchResult GcpProvider::Launch(const provider::LaunchRequest& request) {
  provider::LaunchResult result;
  result.outcome_later = true;
  for (int i = 0; i < request.count; ++i) {
    const std::string name = config_.name_prefix + RandomSuffix();
    GceResult<GceOperation> operation = client_->InsertInstance(
        config_.zone, InstanceResource(name, request.resource_pool, request.offering),
        NewRequestId());
    if (!operation.ok()) {
      result.error = ErrorOf(operation.error());
      break;
    }
    const WallTime now = clock_.WallNow();
    inserts_[name] = {operation.value().name, request.resource_pool, request.offering, now,
                      clock_.Now() + config_.operation_timeout_period};
    result.launched.push_back(
        {name, request.resource_pool, InstanceState::kStarting, request.offering, now});
    if (operation.value().done()) {
      std::optional<ProviderError> error;
      if (operation.value().error) error = ErrorOf(*operation.value().error);
      Finish(name, error);
    }
  }
  return result;
}

Status GcpProvider::DeleteInstance(const std::string& name) {
  GceResult<GceOperation> deleted = client_->DeleteInstance(config_.zone, name, NewRequestId());
  if (deleted.ok() || deleted.error().kind == GceErrorKind::kNotFound) {
    deletes_due_.erase(name);
    return Status::Ok();
  }
  if (deleted.error().code == "resourceNotReady") {
    DeleteLater(name);  // still being created or deleted: asked again at the next list
    return Status::Ok();
  }
  return Unavailable(deleted.error().ToString());
}

void GcpProvider::DeleteLater(const std::string& name) { deletes_due_.insert(name); }

void GcpProvider::RetryDeletes() {
  const std::set<std::string> due = deletes_due_;
  for (const std::string& name : due) {
    if (Status deleted = DeleteInstance(name); !deleted.ok()) {
      spdlog::warn("gcp: {}", deleted.message());
    }
  }
}

Status GcpProvider::Terminate(const std::vector<std::string>& ids) {
  Status first_error = Status::Ok();
  for (const std::string& id : ids) {
    auto insert = inserts_.find(id);
    if (insert != inserts_.end()) {
      // Compute Engine refuses to delete an instance its insert is still creating: deleted
      // once the insert is done.
      insert->second.delete_when_done = true;
      continue;
    }
    Status deleted = DeleteInstance(id);
    if (!deleted.ok() && first_error.ok()) first_error = deleted;
  }
  return first_error;
}

std::vector<Offering> GcpProvider::Offerings() const {
  const Offering on_demand{config_.machine_type, config_.zone, false};
  if (!config_.spot && !config_.preemptible) return {on_demand};
  const Offering spot{config_.machine_type, config_.zone, true};
  if (config_.spot_fallback == "on_demand") return {spot, on_demand};
  return {spot};
}

std::vector<LaunchOutcome> GcpProvider::TakeLaunchOutcomes() {
  std::vector<LaunchOutcome> taken;
  taken.swap(outcomes_);
  return taken;
}

Result<std::unique_ptr<provider::Provider>> MakeGcpProvider(const provider::ProviderConfig& common,
                                                            const bus::PoolProviderEvent& pool,
                                                            const Clock& clock) {
  DET_ASSIGN_OR_RETURN(GcpProviderConfig config,
                       ReadGcpProviderConfig(common.raw, pool.cluster_id));
  config.spot_fallback = common.spot_fallback;
  const Environment env = Environment::Process();
  auto metadata = std::make_shared<MetadataClient>(MetadataOptionsFromEnvironment(env));
  DET_ASSIGN_OR_RETURN(std::unique_ptr<TokenSource> source,
                       ResolveTokenSource(env, metadata, clock));
  auto credentials = std::make_shared<GcpCredentials>(std::move(source), clock);
  DET_ASSIGN_OR_RETURN(config.project,
                       ResolveProject(config.project, *credentials, env, *metadata));
  if (config.zone.empty()) {
    Result<std::string> zone = metadata->Zone();
    if (!zone.ok()) {
      return FailedPrecondition("provider.zone: not set, and no metadata server names one (" +
                                zone.status().message() + ")");
    }
    config.zone = *zone;
  }
  DET_ASSIGN_OR_RETURN(AgentBootstrap bootstrap,
                       provider::MakeAgentBootstrap(config.agent_start, common, pool));
  spdlog::info("gcp provider for pool {}: project {}, zone {}, credentials: {}", pool.resource_pool,
               config.project, config.zone, credentials->Describe());
  auto client = std::make_unique<ComputeClient>(
      ComputeClientOptions{config.project, config.endpoint_url}, std::move(credentials), clock);
  return std::unique_ptr<provider::Provider>(std::make_unique<GcpProvider>(
      std::move(config), std::move(bootstrap), std::move(client), clock));
}

}  // namespace det::gcp
