#include "autoscaler/autoscaler.h"

#include <spdlog/spdlog.h>

#include "bus/socket.h"

namespace det::autoscaler {
namespace {

constexpr Duration kMaxWait = std::chrono::milliseconds(200);

Result<ProviderConfig> ParseProvider(const bus::PoolProviderEvent& pool,
                                     const std::vector<SectionType>& sections) {
  DET_ASSIGN_OR_RETURN(YAML::Node node,
                       ParseYaml(pool.provider_yaml, "pool " + pool.resource_pool));
  ConfigReader reader(node, "resource_pools[" + pool.resource_pool + "].provider");
  ProviderConfig config = ReadProviderConfig(reader, sections);
  DET_RETURN_IF_ERROR(reader.Finish());
  return config;
}

}  // namespace

Autoscaler::Autoscaler(zmq::context_t& context, AutoscalerConfig config,
                       bus::SocketSecurity security, const Clock& clock, ProviderCatalog providers)
    : config_(std::move(config)),
      clock_(clock),
      providers_(std::move(providers)),
      subscriber_(context, "autoscaler",
                  {"", bus::TcpEndpoint(config_.master_host, config_.event_subscribe_port),
                   bus::TcpEndpoint(config_.master_host, config_.snapshot_port)},
                  security, clock, {"agent.", "cluster.", "pool.", "instance."}),
      publisher_(context, "autoscaler", clock),
      security_(std::move(security)) {}

Status Autoscaler::Start() {
  DET_RETURN_IF_ERROR(subscriber_.Start());
  return publisher_.Connect(bus::TcpEndpoint(config_.master_host, config_.event_publish_port),
                            security_);
}

void Autoscaler::Run(const std::atomic<bool>& stop) {
  std::vector<bus::EventSubscriber::Update> updates;
  while (!stop.load()) {
    std::vector<zmq::pollitem_t> items;
    for (zmq::socket_t* s : subscriber_.sockets()) items.push_back({s->handle(), 0, ZMQ_POLLIN, 0});
    for (const auto& [pool, entry] : scalers_) {
      if (entry.worker) items.push_back({nullptr, entry.worker->wake_fd(), ZMQ_POLLIN, 0});
    }
    bus::Poll(items.data(), items.size(), std::chrono::ceil<std::chrono::milliseconds>(kMaxWait));
    updates.clear();
    subscriber_.Receive(&updates);
    subscriber_.Tick(&updates);
    Apply(updates);
    PublishReports();
    publisher_.Pump();
  }
  scalers_.clear();  // stops the workers
}

void Autoscaler::Apply(const std::vector<bus::EventSubscriber::Update>& updates) {
  std::set<std::string> changed;
  for (const auto& update : updates) {
    std::string pool = view_.Apply(update);
    if (!pool.empty()) changed.insert(std::move(pool));
  }
  if (!subscriber_.synced()) return;
  ReconcileScalers();
  if (!updates.empty()) ShareView();
  for (const std::string& pool : changed) {
    auto it = scalers_.find(pool);
    if (it != scalers_.end() && it->second.worker) it->second.worker->DemandChanged();
  }
}

void Autoscaler::ShareView() {
  auto snapshot = std::make_shared<const ClusterView>(view_);
  for (auto& [pool, entry] : scalers_) {
    if (entry.worker) entry.worker->SetView(snapshot);
  }
}

void Autoscaler::ReconcileScalers() {
  for (const auto& [pool, event] : view_.providers()) {
    Scaler& current = scalers_[pool];
    if (current.provider_yaml == event.provider_yaml && !current.provider_yaml.empty()) continue;
    current = {event.provider_yaml, nullptr};
    auto config = ParseProvider(event, providers_.sections);
    auto provider = config.ok() ? providers_.make(*config, event)
                                : Result<std::unique_ptr<Provider>>(config.status());
    if (!provider.ok()) {
      spdlog::error("pool {} is not autoscaled: {}", pool, provider.status().message());
      continue;
    }
    spdlog::info("pool {}: {} provider, {}..{} instances of {} slots", pool, config->type,
                 config->min_instances, config->max_instances, config->slots_per_instance);
    current.worker =
        std::make_unique<PoolWorker>(pool, *config, std::move(provider).value(), clock_,
                                     std::make_shared<const ClusterView>(view_));
  }
  std::erase_if(scalers_, [&](const auto& entry) {
    const bool gone = !view_.providers().contains(entry.first);
    if (gone) spdlog::info("pool {} has no provider any more; not scaling it", entry.first);
    return gone;
  });
}

void Autoscaler::PublishReports() {
  for (auto& [pool, entry] : scalers_) {
    if (!entry.worker) continue;
    for (PoolWorker::Report& report : entry.worker->TakeReports()) {
      Status published = Status::Ok();
      if (auto* decision = std::get_if<bus::ScalingDecisionEvent>(&report)) {
        published = publisher_.Publish(*decision);
      } else {
        const auto& change = std::get<PoolWorker::InstanceReport>(report);
        published = publisher_.Publish(bus::InstanceEvent{change.instance},
                                       "instance/" + change.instance.id, change.gone);
      }
      if (!published.ok()) spdlog::warn("autoscaler: {}", published.message());
    }
  }
}

}  // namespace det::autoscaler
