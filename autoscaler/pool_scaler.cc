#include "autoscaler/pool_scaler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

namespace det::autoscaler {
namespace {

constexpr Duration kListInterval = std::chrono::seconds(5);
constexpr Duration kDecideInterval = std::chrono::seconds(1);
constexpr Duration kListGrace = std::chrono::seconds(60);

bool Live(const Instance& instance) {
  return instance.state != InstanceState::kStopping && instance.state != InstanceState::kTerminated;
}

WallTime FromUnixNanos(int64_t ns) { return WallTime{} + std::chrono::nanoseconds(ns); }

}  // namespace

PoolScaler::PoolScaler(std::string pool, ProviderConfig config, std::unique_ptr<Provider> provider,
                       const Clock& clock, ScalingReporter& reporter)
    : pool_(std::move(pool)),
      config_(std::move(config)),
      provider_(std::move(provider)),
      clock_(clock),
      reporter_(reporter),
      gate_(config_) {}

void PoolScaler::DemandChanged() {
  const MonoTime due = clock_.Now() + config_.launch_batch_window;
  if (!decide_due_ || due < *decide_due_) decide_due_ = due;
}

MonoTime PoolScaler::Tick(const ClusterView& view) {
  const MonoTime now = clock_.Now();
  TrackAgents(view);
  // Seen by its agent before any list showed it: list before deciding, or the decider counts
  // the spot request it came from as capacity still on the way and may cancel it (and with it
  // the instance that just joined).
  if (listed_ && NewUnlistedAgent(view)) next_list_ = now;
  if (now >= next_list_) {
    const bool first = !listed_;
    Refresh();
    next_list_ = now + kListInterval;
    // What the master holds of earlier runs (retained instance events): changed or gone ones
    // are reported again, so no record stays "running" for an instance that is no more.
    if (first && listed_) {
      for (const auto& [id, info] : view.instances()) {
        if (info.resource_pool == pool_) reported_.try_emplace(id, info);
      }
    }
  }
  if (!listed_) return next_list_;  // nothing is decided before the first list
  if (now >= next_decide_ || (decide_due_ && now >= *decide_due_)) {
    Decide(view);
    next_decide_ = now + kDecideInterval;
    decide_due_.reset();
    ReportInstances(view);  // with each decision (at least every second), not every loop turn
  }
  MonoTime next = std::min(next_list_, next_decide_);
  if (decide_due_) next = std::min(next, *decide_due_);
  return next;
}

void PoolScaler::Refresh() {
  auto listed = provider_->List(pool_);
  if (!listed.ok()) {
    spdlog::warn("pool {}: cannot list instances: {}", pool_, listed.status().message());
    Refused("cannot list instances: " + listed.status().message());
    return;
  }
  std::vector<Instance> fresh = std::move(listed).value();
  const std::set<std::string> failed = RecordLaunchOutcomes();
  std::erase_if(fresh, [&](const Instance& i) { return failed.contains(i.id); });
  std::set<std::string> ids;
  std::map<std::string, std::string> fulfilled;  // spot request id → its instance's id
  for (const Instance& instance : fresh) {
    ids.insert(instance.id);
    seen_.insert(instance.id);
    if (!instance.replaces.empty()) fulfilled[instance.replaces] = instance.id;
  }
  const WallTime now = clock_.WallNow();
  for (const Instance& known : instances_) {
    if (ids.contains(known.id)) continue;
    if (auto it = fulfilled.find(known.id); it != fulfilled.end()) {
      if (launched_here_.contains(known.id)) launched_here_.insert(it->second);
      continue;  // became an instance: neither kept nor vanished
    }
    // A cloud's list may lag behind its launches: a launch of ours the list has not shown yet
    // stays for a grace period. Once listed, or ended by us, its absence is its end (an
    // interrupted spot instance frees its place at once).
    if (launched_here_.contains(known.id) && !terminating_.contains(known.id) &&
        !seen_.contains(known.id) && now - known.launched_at < kListGrace) {
      fresh.push_back(known);
      ids.insert(known.id);
      continue;
    }
    const bool ever_connected = connected_.contains(known.id) || lost_at_.contains(known.id) ||
                                disconnected_since_.contains(known.id);
    if (!ever_connected && !terminating_.contains(known.id)) {
      // Gone by itself before its agent came (an agent that crashes at start, a VM that shuts
      // itself down): as much a failed start as an orphan.
      spdlog::warn("pool {}: instance {} vanished before its agent connected", pool_, known.id);
      gate_.NeverConnected(clock_.Now());
    }
  }
  instances_ = std::move(fresh);
  const auto gone = [&](const auto& entry) { return !ids.contains(entry.first); };
  std::erase_if(lost_at_, gone);
  std::erase_if(disconnected_since_, gone);
  std::erase_if(connected_, [&](const std::string& id) { return !ids.contains(id); });
  std::erase_if(terminating_, [&](const std::string& id) { return !ids.contains(id); });
  std::erase_if(launched_here_, [&](const std::string& id) { return !ids.contains(id); });
  std::erase_if(seen_, [&](const std::string& id) { return !ids.contains(id); });
  if (!listed_) {
    spdlog::info("pool {}: {} instance(s) found at start", pool_, instances_.size());
    started_at_ = now;
  }
  listed_ = true;
}

std::set<std::string> PoolScaler::RecordLaunchOutcomes() {
  std::set<std::string> failed;
  std::map<std::string, LaunchOutcome> untracked;  // failures of no awaited launch, by offering
  std::string errors;
  for (const LaunchOutcome& outcome : provider_->TakeLaunchOutcomes()) {
    if (!RecordAwaitedOutcome(outcome) && outcome.error) {
      untracked.try_emplace(outcome.offering.Key(), outcome);
    }
    if (!outcome.error) continue;
    // Not an instance that vanished (no failed start for the breaker): one that never was.
    failed.insert(outcome.instance_id);
    launched_here_.erase(outcome.instance_id);
    std::erase_if(instances_, [&](const Instance& i) { return i.id == outcome.instance_id; });
    const std::string error = std::string(ProviderErrorKindName(outcome.error->kind)) +
                              " error: " + outcome.error->message;
    spdlog::error("pool {}: launch of {} on {} failed: {}", pool_, outcome.instance_id,
                  outcome.offering.Key(), error);
    errors +=
        (errors.empty() ? "" : "; ") + ("launch of " + outcome.instance_id + " failed: ") + error;
  }
  for (const auto& [key, outcome] : untracked) {
    gate_.Record(outcome.offering, {{}, outcome.error}, clock_.Now());
  }
  if (!failed.empty()) {
    bus::ScalingDecisionEvent event;
    event.resource_pool = pool_;
    event.decided_at = UnixNanos(clock_.WallNow());
    event.error = errors;
    reporter_.Decided(event);
    decide_due_ = clock_.Now();  // launch again at once, on another offering if backed off
  }
  return failed;
}

bool PoolScaler::RecordAwaitedOutcome(const LaunchOutcome& outcome) {
  auto instance = awaited_instances_.find(outcome.instance_id);
  if (instance == awaited_instances_.end()) return false;
  AwaitedLaunch& launch = awaited_launches_.at(instance->second);
  if (outcome.error && !launch.recorded) {
    gate_.Record(launch.offering, {{}, outcome.error}, clock_.Now());
    launch.recorded = true;
  }
  if (--launch.outstanding == 0) {
    if (!launch.recorded) gate_.Record(launch.offering, {}, clock_.Now());
    awaited_launches_.erase(instance->second);
  }
  awaited_instances_.erase(instance);
  return true;
}

void PoolScaler::TrackAgents(const ClusterView& view) {
  const WallTime now = clock_.WallNow();
  for (const Instance& instance : instances_) {
    auto agent = view.agents().find(instance.id);
    const bool connected = agent != view.agents().end() && agent->second.state == "connected";
    if (connected) {
      if (connected_.insert(instance.id).second) gate_.Connected();
      lost_at_.erase(instance.id);
      disconnected_since_.erase(instance.id);
      continue;
    }
    if (agent != view.agents().end()) {
      lost_at_.try_emplace(instance.id, now);
    } else if (connected_.contains(instance.id) || lost_at_.contains(instance.id)) {
      disconnected_since_.try_emplace(instance.id,
                                      lost_at_.contains(instance.id) ? lost_at_[instance.id] : now);
    }
    connected_.erase(instance.id);
  }
}

bool PoolScaler::NewUnlistedAgent(const ClusterView& view) {
  bool found = false;
  for (const auto& entry : view.agents()) {
    const std::string& id = entry.first;
    if (entry.second.resource_pool != pool_ || entry.second.state != "connected") continue;
    const bool listed = std::any_of(instances_.begin(), instances_.end(),
                                    [&](const Instance& i) { return i.id == id; });
    if (!listed && unlisted_agents_.insert(id).second) found = true;
  }
  std::erase_if(unlisted_agents_,
                [&](const std::string& id) { return !view.agents().contains(id); });
  return found;
}

DeciderInput PoolScaler::Input(const ClusterView& view) const {
  DeciderInput input;
  input.now = clock_.WallNow();
  std::set<std::string> ending;  // their agents are neither capacity nor unlisted arrivals
  for (const Instance& instance : instances_) {
    if (Live(instance)) {
      input.instances.push_back(instance);
    } else {
      ending.insert(instance.id);
    }
  }
  for (const auto& [id, agent] : view.agents()) {
    if (agent.resource_pool != pool_ || ending.contains(id)) continue;
    AgentView& out = input.agents[id];
    out.connected = agent.state == "connected";
    auto idle = view.idle_since().find(id);
    out.idle = out.connected && idle != view.idle_since().end();
    if (out.idle) out.idle_since = FromUnixNanos(idle->second);
    auto lost = lost_at_.find(id);
    if (lost != lost_at_.end()) out.lost_at = lost->second;
  }
  for (const auto& [id, since] : disconnected_since_) {
    if (!input.agents.contains(id)) input.disconnected_since[id] = since;
  }
  // Instances a previous autoscaler launched whose agents are not here: whether they ever
  // connected is unknown, so they count as disconnected since this one started (terminated
  // after max_disconnected_period, not at once as orphans).
  for (const Instance& instance : input.instances) {
    if (instance.launched_at >= started_at_ || launched_here_.contains(instance.id) ||
        input.agents.contains(instance.id) || input.disconnected_since.contains(instance.id)) {
      continue;
    }
    const WallTime starting_ends =
        instance.launched_at +
        std::chrono::duration_cast<WallTime::duration>(config_.max_agent_starting_period);
    if (input.now >= starting_ends) {
      input.disconnected_since[instance.id] = std::max(started_at_, starting_ends);
    }
  }
  auto pending = view.pending().find(pool_);
  if (pending != view.pending().end()) {
    input.demand = {pending->second.pending_slots, pending->second.pending_tasks,
                    pending->second.pending_aux_tasks};
  }
  return input;
}

void PoolScaler::Decide(const ClusterView& view) {
  const ScaleDecision decision = DecideScale(config_, Input(view));
  bus::ScalingDecisionEvent event;
  event.resource_pool = pool_;
  event.decided_at = UnixNanos(clock_.WallNow());
  TerminateAll(decision, &event);
  LaunchSome(decision, &event);
  if (event.error.empty()) event.error = decision.refused;
  const bool acted = !event.terminated.empty() || !event.launched.empty();
  const bool new_refusal = !event.error.empty() && event.error != last_refusal_;
  last_refusal_ = event.error;
  if (acted || new_refusal) reporter_.Decided(event);
}

void PoolScaler::Refused(const std::string& why) {
  if (why == last_refusal_) return;  // once per change, not once per retry
  last_refusal_ = why;
  bus::ScalingDecisionEvent event;
  event.resource_pool = pool_;
  event.decided_at = UnixNanos(clock_.WallNow());
  event.error = why;
  reporter_.Decided(event);
}

void PoolScaler::TerminateAll(const ScaleDecision& decision, bus::ScalingDecisionEvent* event) {
  if (decision.terminate.empty()) return;
  std::vector<std::string> ids;
  for (const TerminateOrder& order : decision.terminate) {
    spdlog::info("pool {}: terminating {}: {}", pool_, order.id, order.reason);
    ids.push_back(order.id);
  }
  if (Status done = provider_->Terminate(ids); !done.ok()) {
    spdlog::error("pool {}: cannot terminate {} instance(s): {}", pool_, ids.size(),
                  done.message());
    event->error = "terminate: " + done.message();
    return;
  }
  for (const TerminateOrder& order : decision.terminate) {
    terminating_.insert(order.id);
    event->terminated.push_back({order.id, order.reason});
    if (order.never_connected) gate_.NeverConnected(clock_.Now());
    disconnected_since_.erase(order.id);
    lost_at_.erase(order.id);
  }
  // Stopping until the provider's list no longer shows them, then reported terminated: reported
  // once each way, never terminated and then stopping again while the cloud (or the process)
  // winds down.
  for (Instance& instance : instances_) {
    if (std::find(ids.begin(), ids.end(), instance.id) != ids.end()) {
      instance.state = InstanceState::kStopping;
    }
  }
}

void PoolScaler::LaunchSome(const ScaleDecision& decision, bus::ScalingDecisionEvent* event) {
  if (decision.launch <= 0) return;
  event->launch = decision.launch;
  event->launch_reason = decision.launch_reason;
  const LaunchGate::Permit permit =
      gate_.Ask(decision.launch, provider_->Offerings(), clock_.Now());
  if (permit.count == 0) {
    if (permit.refusal != last_refusal_) {
      spdlog::warn("pool {}: not launching {} instance(s): {}", pool_, decision.launch,
                   permit.refusal);
    }
    event->error = permit.refusal;
    return;
  }
  const LaunchResult result = provider_->Launch({pool_, permit.count, permit.offering});
  if (result.error || !result.outcome_later) gate_.Record(permit.offering, result, clock_.Now());
  if (result.outcome_later && !result.launched.empty()) {
    // The gate hears of this call once more: at its first failed instance, or when all started
    // (unless the call's own error was recorded already).
    const uint64_t launch = ++launches_;
    awaited_launches_[launch] = {permit.offering, static_cast<int>(result.launched.size()),
                                 result.error.has_value()};
    for (const Instance& instance : result.launched) awaited_instances_[instance.id] = launch;
  }
  for (const Instance& instance : result.launched) {
    event->launched.push_back(instance.id);
    instances_.push_back(instance);
    launched_here_.insert(instance.id);
  }
  spdlog::info("pool {}: launched {} of {} instance(s) ({}): {}", pool_, result.launched.size(),
               permit.count, permit.offering.Key(), decision.launch_reason);
  if (result.error) {
    event->error =
        std::string(ProviderErrorKindName(result.error->kind)) + " error: " + result.error->message;
    spdlog::error("pool {}: launch on {}: {}", pool_, permit.offering.Key(), event->error);
  }
}

void PoolScaler::ReportInstances(const ClusterView& view) {
  std::map<std::string, bus::InstanceInfo> now;
  for (const Instance& instance : instances_) {
    bus::InstanceInfo info{instance.id,
                           pool_,
                           config_.type,
                           instance.offering.instance_type,
                           instance.offering.zone,
                           instance.offering.spot,
                           std::string(InstanceStateName(instance.state)),
                           "",
                           UnixNanos(instance.launched_at)};
    auto agent = view.agents().find(instance.id);
    if (agent != view.agents().end() && instance.state == InstanceState::kStarting) {
      info.state = InstanceStateName(InstanceState::kRunning);  // it booted: its agent is here
    }
    if (agent != view.agents().end()) {
      info.agent = agent->second.state != "connected"        ? "lost"
                   : view.idle_since().contains(instance.id) ? "idle"
                                                             : "connected";
    }
    now[instance.id] = info;
  }
  for (const auto& [id, info] : now) {
    auto before = reported_.find(id);
    if (before == reported_.end() || !(before->second == info))
      reporter_.InstanceChanged(info, false);
  }
  for (const auto& [id, info] : reported_) {
    if (!now.contains(id)) reporter_.InstanceChanged(info, true);
  }
  reported_ = std::move(now);
}

}  // namespace det::autoscaler
