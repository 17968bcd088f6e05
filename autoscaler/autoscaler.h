#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "autoscaler/autoscaler_config.h"
#include "autoscaler/cluster_view.h"
#include "autoscaler/pool_scaler.h"
#include "autoscaler/pool_worker.h"
#include "bus/event_publisher.h"
#include "bus/event_subscriber.h"

namespace det::autoscaler {

// The provider types an autoscaler is built with: how to read each one's section, and how to make
// the provider a pool's section names (`type`), or say why it cannot.
struct ProviderCatalog {
  std::vector<SectionType> sections;
  std::function<Result<std::unique_ptr<Provider>>(const ProviderConfig& config,
                                                  const bus::PoolProviderEvent& pool)>
      make;
};

// The providers this build has: `local` (det-agent processes on this host), `aws` (EC2) and
// `gcp` (Compute Engine). Defined in builtin_providers.cc, the one file of this folder that names
// the clouds (a library of its own above them).
ProviderCatalog BuiltInProviders(const Clock& clock);

// det-autoscaler: follows the master's event bus (snapshot, then every event), keeps one
// PoolScaler per pool that has a `provider:` section (re-made when the section changes), each on
// a thread of its own (PoolWorker: a slow cloud call delays its pool only), and publishes every
// decision and instance change (`instance.decision`, `instance.state`) for the master to store.
// Scalers run only while the view is in sync with the master: an autoscaler that cannot see the
// cluster decides nothing.
//
// Threading: Run() on the calling thread until `stop` is set; it owns the bus sockets.
class Autoscaler final {
 public:
  Autoscaler(zmq::context_t& context, AutoscalerConfig config, bus::SocketSecurity security,
             const Clock& clock, ProviderCatalog providers);

  Status Start();
  void Run(const std::atomic<bool>& stop);

 private:
  void Apply(const std::vector<bus::EventSubscriber::Update>& updates);
  void ReconcileScalers();
  void ShareView();
  void PublishReports();

  AutoscalerConfig config_;
  const Clock& clock_;
  ProviderCatalog providers_;
  bus::EventSubscriber subscriber_;
  bus::EventPublisher publisher_;
  bus::SocketSecurity security_;
  ClusterView view_;
  struct Scaler {
    std::string provider_yaml;
    std::unique_ptr<PoolWorker> worker;  // null: the section was refused
  };
  std::map<std::string, Scaler> scalers_;
};

}  // namespace det::autoscaler
