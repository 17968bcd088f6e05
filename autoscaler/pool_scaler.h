#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "autoscaler/cluster_view.h"
#include "autoscaler/contract.h"
#include "autoscaler/launch_gate.h"
#include "autoscaler/scale_decider.h"
#include "bus/catalog/autoscaler.h"
#include "common/clock.h"

namespace det::autoscaler {

// Where a pool's scaler reports what it did and what its instances are (the autoscaler publishes
// both for the master to store).
class ScalingReporter {
 public:
  virtual ~ScalingReporter() = default;
  virtual void Decided(const bus::ScalingDecisionEvent& decision) = 0;
  // An instance appeared or changed (`gone`: terminated or no longer listed).
  virtual void InstanceChanged(const bus::InstanceInfo& instance, bool gone) = 0;
};

// One pool's autoscaling: keeps the decider's inputs current from the cluster view and the
// provider's list, runs the decider when demand changes (within `launch_batch_window`) and every
// second otherwise, carries the decision out through the launch gate, and then reports what
// changed of its instances.
//
// Nothing is decided before the provider's list has been read once, so a restarted autoscaler
// counts the instances a previous one launched and launches no duplicates. Launched instances
// join the list at once (and stay for a minute while the provider does not list them yet); an
// instance the list showed and no longer shows, or one terminated here, leaves it at once, and
// one the provider reports stopping (a spot interruption notice) no longer counts toward
// max_instances. An instance launched here that vanishes before its agent
// connected counts against the circuit breaker like an orphan. Instances a previous autoscaler
// launched whose agents are absent are taken as disconnected since this one started.
//
// Threading: one thread at a time (det-autoscaler runs each pool's scaler on a PoolWorker's
// thread; the simulator on its own). Provider calls block that thread.
class PoolScaler {
 public:
  PoolScaler(std::string pool, ProviderConfig config, std::unique_ptr<Provider> provider,
             const Clock& clock, ScalingReporter& reporter);

  // Pending work changed: decide within the batch window.
  void DemandChanged();
  // Does what is due and returns when it next needs to run.
  MonoTime Tick(const ClusterView& view);

  const std::string& pool() const { return pool_; }
  const ProviderConfig& config() const { return config_; }
  const std::vector<Instance>& instances() const { return instances_; }

 private:
  void Refresh();
  // Feeds the outcomes of launches the provider learnt later to the gate, once per launch call
  // (once per offering for outcomes of no awaited launch); failed instances leave the list and
  // are reported in one decision's error. Returns the failed instances' ids.
  std::set<std::string> RecordLaunchOutcomes();
  // Records `outcome` against the launch call it belongs to; false if it belongs to none.
  bool RecordAwaitedOutcome(const LaunchOutcome& outcome);
  void TrackAgents(const ClusterView& view);
  // Whether an agent of this pool connected that no listed instance accounts for yet (a spot
  // request fulfilled and booted between two lists): true once per such agent.
  bool NewUnlistedAgent(const ClusterView& view);
  DeciderInput Input(const ClusterView& view) const;
  void Decide(const ClusterView& view);
  // A decision that did nothing but say why (the provider cannot list): reported when it differs
  // from the last one, so `det autoscaler decisions` shows it once per change.
  void Refused(const std::string& why);
  void TerminateAll(const ScaleDecision& decision, bus::ScalingDecisionEvent* event);
  void LaunchSome(const ScaleDecision& decision, bus::ScalingDecisionEvent* event);
  void ReportInstances(const ClusterView& view);

  const std::string pool_;
  const ProviderConfig config_;
  std::unique_ptr<Provider> provider_;
  const Clock& clock_;
  ScalingReporter& reporter_;
  LaunchGate gate_;

  bool listed_ = false;
  std::vector<Instance> instances_;
  std::set<std::string> connected_;                     // instance ids whose agent is connected
  std::map<std::string, WallTime> lost_at_;             // agent lost, master holds its place
  std::map<std::string, WallTime> disconnected_since_;  // agent connected once, now gone
  std::set<std::string> terminating_;      // terminated by this scaler, until no longer listed
  std::set<std::string> launched_here_;    // launched by this scaler, until no longer listed
  std::set<std::string> seen_;             // shown by the provider's list, until no longer
  std::set<std::string> unlisted_agents_;  // connected agents no list had shown when they came
  WallTime started_at_{};                  // the first successful list
  std::map<std::string, bus::InstanceInfo> reported_;
  // Launch calls whose instances' outcomes come later (LaunchResult::outcome_later).
  struct AwaitedLaunch {
    Offering offering;
    int outstanding = 0;    // instances whose outcome has not come yet
    bool recorded = false;  // the gate heard of a failure of this call already
  };
  uint64_t launches_ = 0;
  std::map<uint64_t, AwaitedLaunch> awaited_launches_;
  std::map<std::string, uint64_t> awaited_instances_;  // instance id → its launch call
  std::string last_refusal_;
  MonoTime next_list_{};
  MonoTime next_decide_{};
  std::optional<MonoTime> decide_due_;
};

}  // namespace det::autoscaler
