#include "master/cluster/agent_registry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/index_ranges.h"
#include "common/strings.h"
#include "common/thread_name.h"

namespace det::master {
namespace {

TaskSpec SpecOf(const bus::CommandRunRequest& r) {
  return {r.entrypoint,   r.slots,       r.resource_pool, r.env,        r.priority,
          r.weight,       r.preemptible, r.single_node,   r.max_slots,  r.container,
          r.max_restarts, r.run_as,      r.owner,         r.description};
}

}  // namespace

using ChannelEvent = bus::AgentChannelServer::Event;

constexpr auto kTimerInterval = std::chrono::milliseconds(50);
// Scheduling passes are spaced by this many times the last pass's length (at most
// kMaxPassSpacing): with a deep queue, when each pass walks thousands of tasks, passes take at
// most a tenth of the registry's thread and a burst of ends is placed in one pass; with a short
// queue a pass takes microseconds and so does the wait.
constexpr int64_t kPassSpacingFactor = 10;
constexpr auto kMaxPassSpacing = std::chrono::milliseconds(20);

AgentRegistry::AgentRegistry(zmq::context_t& context, const Clock& clock,
                             const bus::AgentChannelConfig& channel, int64_t max_message_bytes,
                             ClusterRecords& records, std::string master_address,
                             const ResourcesConfig& resources, AllocationTokens tokens)
    : clock_(clock),
      channel_(context, "master", clock, channel,
               bus::SocketLimits{.max_message_bytes = max_message_bytes}),
      queries_(context, "agent-registry", clock),
      publisher_(context, "master.agent-registry", clock),
      records_(records),
      tasks_(*this, resources, std::move(master_address)),
      reconnect_window_(channel.reconnect_window),
      pools_(PoolNames(resources)),
      tokens_(std::move(tokens)) {
  for (const ResourcePoolConfig& pool : resources.resource_pools) {
    if (pool.agent_reconnect_wait) {
      pool_reconnect_waits_[pool.pool_name] = *pool.agent_reconnect_wait;
    }
  }
  HandleQueries();
}

bus::RpcServer::Hold AgentRegistry::UntilStored() {
  return [this](bus::RpcServer::Release release) {
    records_.AfterStored([release = std::move(release)](const Status& stored) {
      release(stored.ok() ? stored
                          : Unavailable("accepted, but not stored: " + stored.message() +
                                        "; a restarted master would not know of it"));
    });
  };
}

void AgentRegistry::HandleQueries() {
  using bus::RpcContext;
  queries_.Handle<bus::AgentListRequest, bus::AgentList>(
      [this](const RpcContext&, const bus::AgentListRequest&) -> Result<bus::AgentList> {
        return List();
      });
  queries_.Handle<bus::AgentEnableRequest, bus::AgentReply>(
      [this](const RpcContext&, const bus::AgentEnableRequest& r) { return Enable(r); });
  queries_.Handle<bus::SlotEnableRequest, bus::AgentReply>(
      [this](const RpcContext&, const bus::SlotEnableRequest& r) { return EnableSlot(r); });
  queries_.Handle<bus::CommandRunRequest, bus::CommandRunReply>(
      [this](const RpcContext&, const bus::CommandRunRequest& r) -> Result<bus::CommandRunReply> {
        if (r.array.empty()) {
          DET_ASSIGN_OR_RETURN(std::string id, tasks_.Submit(SpecOf(r), NowNs()));
          return bus::CommandRunReply{id};
        }
        DET_ASSIGN_OR_RETURN(std::vector<int64_t> indices,
                             ParseIndexRanges(r.array, bus::CommandRunRequest::kMaxArrayTasks));
        DET_ASSIGN_OR_RETURN(std::string id, tasks_.SubmitArray(SpecOf(r), indices, NowNs()));
        return bus::CommandRunReply{id, static_cast<int64_t>(indices.size())};
      },
      UntilStored());
  queries_.Handle<bus::TaskSubmitRequest, bus::CommandRunReply>(
      [this](const RpcContext&, const bus::TaskSubmitRequest& r) -> Result<bus::CommandRunReply> {
        DET_ASSIGN_OR_RETURN(std::string id,
                             tasks_.Submit(SpecOf(r.spec), NowNs(), {r.task_id, r.type, r.job_id}));
        return bus::CommandRunReply{id};
      },
      UntilStored());
  queries_.Handle<bus::JobListRequest, bus::JobList>(
      [this](const RpcContext&, const bus::JobListRequest& r) -> Result<bus::JobList> {
        return bus::JobList{tasks_.Jobs(r.resource_pool)};
      });
  queries_.Handle<bus::JobUpdateRequest, bus::JobUpdateReply>(
      [this](const RpcContext&, const bus::JobUpdateRequest& r) -> Result<bus::JobUpdateReply> {
        DET_ASSIGN_OR_RETURN(bus::JobSummary job, tasks_.UpdateJob(r));
        return bus::JobUpdateReply{std::move(job)};
      },
      UntilStored());
  queries_.Handle<bus::TaskListRequest, bus::TaskList>(
      [this](const RpcContext&, const bus::TaskListRequest& r) -> Result<bus::TaskList> {
        bus::TaskList some;
        if (!r.array_id.empty()) {
          for (const Task* task : tasks_.ArrayTasks(r.array_id)) {
            some.tasks.push_back(task->Summary());
          }
          return some;
        }
        if (r.task_ids.empty()) return bus::TaskList{tasks_.List()};
        for (const std::string& id : r.task_ids) {
          if (const Task* task = tasks_.Find(id)) some.tasks.push_back(task->Summary());
        }
        return some;
      });
  queries_.Handle<bus::TaskGetRequest, bus::TaskGetReply>(
      [this](const RpcContext&, const bus::TaskGetRequest& r) -> Result<bus::TaskGetReply> {
        const Task* task = tasks_.Find(r.task_id);
        if (!task) return NotFound("task " + r.task_id + " not found");
        return bus::TaskGetReply{task->Summary()};
      });
  queries_.Handle<bus::RegistryStatsRequest, bus::RegistryStats>(
      [this](const RpcContext&, const bus::RegistryStatsRequest&) -> Result<bus::RegistryStats> {
        const TaskManager::SchedulingStats& s = tasks_.scheduling();
        return bus::RegistryStats{s.passes, s.total_ns, s.last_ns,
                                  static_cast<int64_t>(channel_.received()),
                                  static_cast<int64_t>(channel_.drops().total())};
      });
  queries_.Handle<bus::TaskEnvSetRequest, bus::TaskEnvSetReply>(
      [this](const RpcContext&, const bus::TaskEnvSetRequest& r) -> Result<bus::TaskEnvSetReply> {
        DET_RETURN_IF_ERROR(tasks_.SetEnv(r.task_id, r.env));
        return bus::TaskEnvSetReply{};
      },
      UntilStored());
  queries_.Handle<bus::TaskKillRequest, bus::TaskKillReply>(
      [this](const RpcContext&, const bus::TaskKillRequest& r) -> Result<bus::TaskKillReply> {
        Result<std::string> state = tasks_.Kill(r.task_id, NowNs());
        if (state.ok() || state.status().code() != StatusCode::kNotFound) {
          DET_RETURN_IF_ERROR(state.status());
          return bus::TaskKillReply{*state};
        }
        DET_ASSIGN_OR_RETURN(int64_t stopped, tasks_.KillArray(r.task_id, NowNs()));
        return bus::TaskKillReply{"", stopped};
      },
      UntilStored());
}

AgentRegistry::~AgentRegistry() { Stop(); }

Result<std::string> AgentRegistry::Bind(const std::string& agent_endpoint,
                                        const bus::SocketSecurity& security,
                                        const std::string& event_publish_endpoint) {
  DET_ASSIGN_OR_RETURN(std::string bound, channel_.Bind(agent_endpoint, security));
  DET_RETURN_IF_ERROR(queries_.Bind(kQueryEndpoint, {}).status());
  DET_RETURN_IF_ERROR(publisher_.Connect(event_publish_endpoint, {}));
  return bound;
}

void AgentRegistry::PublishProviders(const std::vector<bus::PoolProviderEvent>& providers) {
  for (const bus::PoolProviderEvent& event : providers) {
    Status published = publisher_.Publish(event, "pool/" + event.resource_pool);
    if (!published.ok()) spdlog::warn("agent registry: {}", published.message());
  }
}

void AgentRegistry::Restore(std::vector<Task> tasks) {
  const int64_t now = NowNs();
  records_.MasterRestarted(now);
  const size_t count = tasks.size();
  for (Task& task : tasks) tasks_.Restore(std::move(task));
  for (const std::string& agent_id : tasks_.AwaitedAgents()) {
    awaited_[agent_id] = clock_.Now() + reconnect_window_;
    reconcile_.insert(agent_id);
  }
  if (count > 0) {
    spdlog::info("resuming {} unfinished tasks; waiting up to {} for {} agents", count,
                 FormatDuration(reconnect_window_), awaited_.size());
  }
}

void AgentRegistry::ExpireAwaitedAgents() {
  const MonoTime now = clock_.Now();
  for (auto it = awaited_.begin(); it != awaited_.end();) {
    if (now < it->second) {
      ++it;
      continue;
    }
    spdlog::warn("agent {} did not come back after the master restarted; its tasks fail",
                 it->first);
    tasks_.RemoveAgent(it->first, NowNs());
    it = awaited_.erase(it);
  }
}

void AgentRegistry::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void AgentRegistry::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void AgentRegistry::Run() {
  NameThisThread("registry");
  publisher_.HoldUntilPump();  // a turn's events go out together, at its end
  std::vector<ChannelEvent> events;
  while (!stop_) {
    zmq::pollitem_t items[] = {{channel_.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {queries_.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {publisher_.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {nullptr, queries_.answers_fd(), ZMQ_POLLIN, 0}};
    bus::Poll(items, 4, PollTimeout());
    events.clear();
    if (items[0].revents & ZMQ_POLLIN) channel_.Receive(&events);
    if ((items[1].revents | items[3].revents) & ZMQ_POLLIN) queries_.Receive();
    publisher_.Pump();
    // Timers walk every session and agent: at most once per interval, however busy the socket.
    const bool timers_due = clock_.Now() >= next_timers_;
    if (timers_due) {
      next_timers_ = clock_.Now() + kTimerInterval;
      channel_.Tick(&events);
    }
    for (auto& event : events) OnChannelEvent(event);
    ScheduleWhenDue();  // once for all the changes above
    SendNotices();
    if (timers_due) {
      ExpireAwaitedAgents();
      PublishIdle();
      tasks_.SendDueStops(NowNs());
    }
    publisher_.Pump();     // this turn's events
    channel_.FlushAcks();  // and the acknowledgements its agents' messages are owed
  }
}

std::chrono::milliseconds AgentRegistry::PollTimeout() const {
  if (!tasks_.schedule_pending()) return kTimerInterval;
  const auto until_pass =
      std::chrono::ceil<std::chrono::milliseconds>(next_pass_ - RealClock::Instance().Now());
  return std::clamp(until_pass, std::chrono::milliseconds(0), kTimerInterval);
}

void AgentRegistry::ScheduleWhenDue() {
  if (!tasks_.schedule_pending() || RealClock::Instance().Now() < next_pass_) return;
  tasks_.Schedule();
  const auto spacing = std::chrono::nanoseconds(tasks_.scheduling().last_ns * kPassSpacingFactor);
  next_pass_ = RealClock::Instance().Now() +  // from the pass's end
               std::min<std::chrono::nanoseconds>(spacing, kMaxPassSpacing);
}

void AgentRegistry::OnChannelEvent(ChannelEvent& event) {
  switch (event.kind) {
    case ChannelEvent::Kind::kConnected:
      spdlog::info("agent {} connected", event.agent_id);
      reconcile_.insert(event.agent_id);  // a new session: nothing is in flight to it
      return;
    case ChannelEvent::Kind::kReconnected:
      spdlog::info("agent {} reconnected{}", event.agent_id,
                   event.agent_restarted ? " (agent restarted)" : "");
      SetState(event.agent_id, "connected");
      if (event.agent_restarted) reconcile_.insert(event.agent_id);
      tasks_.SetAgentSchedulable(event.agent_id, true);
      return;
    case ChannelEvent::Kind::kLost:
      spdlog::warn("agent {} lost: silent past the limit; keeping its place", event.agent_id);
      SetState(event.agent_id, "lost");
      Notify<bus::AgentLost>(event.agent_id, "silent past the limit");
      tasks_.SetAgentSchedulable(event.agent_id, false);
      return;
    case ChannelEvent::Kind::kExpired:
      spdlog::warn("agent {} gone: did not reconnect within the reconnect window", event.agent_id);
      Forget(event.agent_id, "gone");
      return;
    case ChannelEvent::Kind::kMessage:
      OnAgentMessage(event.agent_id, event.message);
      return;
  }
}

void AgentRegistry::OnAgentMessage(const std::string& agent_id, const bus::Envelope& message) {
  auto complain = [&](const Status& status) {
    spdlog::warn("agent {}: bad {}: {}", agent_id, message.type, status.message());
  };
  if (message.is(bus::WorkloadLogs::kType)) {
    auto logs = message.Decode<bus::WorkloadLogs>();
    if (!logs.ok()) return complain(logs.status());
    records_.Logs(agent_id, std::move(*logs));
  } else if (message.is(bus::WorkloadState::kType)) {
    auto state = message.Decode<bus::WorkloadState>();
    if (!state.ok()) return complain(state.status());
    tasks_.OnWorkloadState(agent_id, *state, NowNs());
    if (state->state == bus::kWorkloadTerminated) {
      records_.NoticeWhenStored({agent_id, state->allocation_id, 0});
    }
  } else if (message.is(bus::AgentUtilization::kType)) {
    auto sample = message.Decode<bus::AgentUtilization>();
    if (!sample.ok()) return complain(sample.status());
    if (auto it = agents_.find(agent_id); it != agents_.end()) {
      it->second.utilization = std::move(sample->slots);
    }
  } else if (message.is(bus::AgentLeaving::kType)) {
    auto leaving = message.Decode<bus::AgentLeaving>();
    if (!leaving.ok()) return complain(leaving.status());
    OnLeaving(agent_id, *leaving);
  } else if (message.is(bus::AgentInterruption::kType)) {
    auto notice = message.Decode<bus::AgentInterruption>();
    if (!notice.ok()) return complain(notice.status());
    OnInterruption(agent_id, *notice);
  } else if (message.is(bus::AgentRegister::kType)) {
    auto info = message.Decode<bus::AgentRegister>();
    if (!info.ok()) return complain(info.status());
    OnRegister(agent_id, *info);
  } else {
    spdlog::debug("agent {}: ignoring {}", agent_id, message.type);
  }
}

void AgentRegistry::OnLeaving(const std::string& agent_id, const bus::AgentLeaving& leaving) {
  const TaskManager::AgentUsage usage = tasks_.Usage(agent_id);
  if (usage.used_slots > 0 || usage.aux_tasks > 0) {
    // Its workloads outlive it: keep its place for the reconnect window, as for a lost agent.
    spdlog::warn("agent {} is leaving ({}) with work assigned; keeping its place", agent_id,
                 leaving.reason);
    return;
  }
  spdlog::info("agent {} left: {}", agent_id, leaving.reason);
  channel_.Close(agent_id);
  Forget(agent_id, "left");
}

void AgentRegistry::OnInterruption(const std::string& agent_id,
                                   const bus::AgentInterruption& notice) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || it->second.interruption == notice.reason) return;  // said again
  it->second.interruption = notice.reason;
  constexpr int64_t kUnsaidNs = 30'000'000'000;  // a deadline not given: GCE's notice
  const int64_t now = NowNs();
  Result<int> preempted = tasks_.AgentInterrupted(
      agent_id, "preempted: the agent's machine is being taken away (" + notice.reason + ")",
      notice.deadline > 0 ? notice.deadline : now + kUnsaidNs, now);
  if (!preempted.ok()) return;
  spdlog::warn("agent {}: {}; no new work for it, {} trial(s) told to checkpoint and stop",
               agent_id, notice.reason, *preempted);
  Notify<bus::AgentDisabled>(agent_id, notice.reason);
  PublishState(agent_id, it->second, /*tombstone=*/false);
}

void AgentRegistry::Forget(const std::string& agent_id, const std::string& why) {
  if (auto it = agents_.find(agent_id); it != agents_.end()) {
    PublishState(agent_id, it->second, /*tombstone=*/true);
    agents_.erase(it);
    RecordConnection(agent_id, why);
  }
  tasks_.RemoveAgent(agent_id, NowNs());
}

void AgentRegistry::SendNotices() {
  for (const ClusterRecords::Notice& n : records_.TakeNotices()) {
    if (n.batch > 0) {
      (void)channel_.SendBestEffort(
          n.agent_id, bus::WorkloadLogsCommitted{n.allocation_id, n.incarnation, n.batch});
    } else {
      (void)channel_.SendBestEffort(n.agent_id, bus::WorkloadEndRecorded{n.allocation_id});
    }
  }
}

void AgentRegistry::StartWorkload(const std::string& agent_id, const bus::WorkloadStart& start) {
  bus::WorkloadStart signed_start = start;
  signed_start.session_token = tokens_.Issue(start.allocation_id);
  if (Status sent = channel_.SendCommand(agent_id, signed_start); !sent.ok()) {
    spdlog::error("cannot start {} on agent {}: {}", start.allocation_id, agent_id, sent.message());
  }
}

void AgentRegistry::KillWorkload(const std::string& agent_id, const bus::WorkloadKill& kill) {
  if (Status sent = channel_.SendCommand(agent_id, kill); !sent.ok()) {
    spdlog::error("cannot stop {} on agent {}: {}", kill.allocation_id, agent_id, sent.message());
  }
}

void AgentRegistry::TaskChanged(const Task& task) {
  records_.TaskChanged(task);
  Status published = publisher_.Publish(bus::TaskStateEvent{task.Summary()});
  if (!published.ok()) spdlog::warn("agent registry: {}", published.message());
}

void AgentRegistry::TaskSettingsChanged(const Task& task) { records_.TaskSettingsChanged(task); }

void AgentRegistry::PendingChanged(const bus::ClusterPending& pending) {
  Status published = publisher_.Publish(pending, "pending/" + pending.resource_pool);
  if (!published.ok()) spdlog::warn("agent registry: {}", published.message());
}

std::string AgentRegistry::RefusalReason(const std::string& agent_id,
                                         const bus::AgentRegister& info) const {
  if (std::find(pools_.begin(), pools_.end(), info.resource_pool) == pools_.end()) {
    return "resource pool \"" + info.resource_pool +
           "\" is not configured; known pools: " + Join(pools_, ", ");
  }
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return "";
  const bus::AgentRegister& held = it->second.info;
  auto devices = [](const std::vector<bus::SlotInfo>& slots) {
    std::vector<std::string> ids;
    for (const auto& slot : slots) ids.push_back(slot.type + ":" + slot.id + ":" + slot.uuid);
    return ids;
  };
  if (held.resource_pool != info.resource_pool || devices(held.slots) != devices(info.slots)) {
    return "agent " + agent_id + " came back with other devices or another resource pool than " +
           "the master still holds for it; start it again after the reconnect window";
  }
  return "";
}

void AgentRegistry::OnRegister(const std::string& agent_id, const bus::AgentRegister& info) {
  if (std::string reason = RefusalReason(agent_id, info); !reason.empty()) {
    spdlog::warn("agent {} refused: {}", agent_id, reason);
    (void)channel_.SendCommand(agent_id, bus::AgentShutdown{reason});
    return;
  }
  const bool is_new = !agents_.count(agent_id) || agents_[agent_id].state != "connected";
  AgentEntry& entry = agents_[agent_id];
  entry.info = info;
  entry.state = "connected";
  if (is_new) entry.registered_at = NowNs();
  spdlog::info("agent {} registered: {} slots in pool {}, version {}", agent_id, info.slots.size(),
               info.resource_pool, info.version);
  PublishState(agent_id, entry, /*tombstone=*/false);
  if (is_new) Notify<bus::AgentConnected>(agent_id);
  std::vector<std::string> slot_ids;
  for (const auto& slot : info.slots) slot_ids.push_back(slot.id);
  awaited_.erase(agent_id);
  if (auto wait = pool_reconnect_waits_.find(info.resource_pool);
      wait != pool_reconnect_waits_.end()) {
    (void)channel_.SetReconnectWindow(agent_id, wait->second);
  }
  // Reconciled before the agent's slots are offered: work placed now must not look unreported.
  tasks_.Reconcile(agent_id, info.workloads, reconcile_.erase(agent_id) > 0, NowNs());
  tasks_.SetAgent(agent_id, info.resource_pool, slot_ids);
  for (const bus::WorkloadState& workload : info.workloads) {
    if (workload.state == bus::kWorkloadTerminated) {
      records_.NoticeWhenStored({agent_id, workload.allocation_id, 0});
    }
  }
  records_.AgentRegistered(agent_id, info, NowNs());
  if (is_new) RecordConnection(agent_id, "connected");
}

void AgentRegistry::SetState(const std::string& agent_id, const std::string& state) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || it->second.state == state) return;
  it->second.state = state;
  PublishState(agent_id, it->second, /*tombstone=*/false);
  RecordConnection(agent_id, state);
}

void AgentRegistry::RecordConnection(const std::string& agent_id, const std::string& state) {
  records_.AgentStateChanged(agent_id, state, NowNs());
}

template <class Notice>
void AgentRegistry::Notify(const std::string& agent_id, std::string reason) {
  std::string pool;
  if (auto it = agents_.find(agent_id); it != agents_.end()) pool = it->second.info.resource_pool;
  Status published = publisher_.Publish(Notice{agent_id, pool, std::move(reason)});
  if (!published.ok()) spdlog::warn("agent registry: {}", published.message());
}

Result<bus::AgentReply> AgentRegistry::Enable(const bus::AgentEnableRequest& request) {
  auto it = agents_.find(request.agent_id);
  if (it == agents_.end()) return NotFound("agent " + request.agent_id + " not found");
  DET_RETURN_IF_ERROR(tasks_.SetAgentEnabled(request.agent_id, request.enabled, request.drain));
  spdlog::info("agent {} {}{}", request.agent_id, request.enabled ? "enabled" : "disabled",
               !request.enabled && request.drain ? " (draining)" : "");
  if (request.enabled) {
    Notify<bus::AgentEnabled>(request.agent_id);
  } else {
    Notify<bus::AgentDisabled>(request.agent_id, request.drain ? "drain" : "kill");
  }
  PublishState(request.agent_id, it->second, /*tombstone=*/false);
  return bus::AgentReply{Summary(request.agent_id, it->second, LastHeardMsAgo()[request.agent_id])};
}

Result<bus::AgentReply> AgentRegistry::EnableSlot(const bus::SlotEnableRequest& request) {
  auto it = agents_.find(request.agent_id);
  if (it == agents_.end()) return NotFound("agent " + request.agent_id + " not found");
  DET_RETURN_IF_ERROR(tasks_.SetSlotEnabled(request.agent_id, request.slot_id, request.enabled));
  return bus::AgentReply{Summary(request.agent_id, it->second, LastHeardMsAgo()[request.agent_id])};
}

void AgentRegistry::PublishIdle() {
  const MonoTime now = clock_.Now();
  if (now < next_idle_check_) return;
  next_idle_check_ = now + std::chrono::milliseconds(500);
  std::vector<IdleTracker::AgentNow> agents;
  for (const auto& [id, entry] : agents_) {
    const TaskManager::AgentUsage usage = tasks_.Usage(id);
    agents.push_back({id, entry.info.resource_pool,
                      entry.state == "connected" && usage.used_slots == 0 && usage.aux_tasks == 0});
  }
  if (!idle_.Update(agents, NowNs())) return;
  Status published = publisher_.Publish(idle_.current(), "cluster/idle");
  if (!published.ok()) spdlog::warn("agent registry: {}", published.message());
}

void AgentRegistry::PublishState(const std::string& agent_id, const AgentEntry& entry,
                                 bool tombstone) {
  bus::AgentStateEvent event{agent_id, tombstone ? "gone" : entry.state, entry.info.resource_pool,
                             static_cast<int32_t>(entry.info.slots.size()),
                             tasks_.Usage(agent_id).enabled};
  Status published = publisher_.Publish(event, "agent/" + agent_id, tombstone);
  if (!published.ok()) spdlog::warn("agent registry: {}", published.message());
}

std::map<std::string, int64_t> AgentRegistry::LastHeardMsAgo() const {
  std::map<std::string, int64_t> heard;
  for (const auto& s : channel_.Sessions()) {
    heard[s.agent_id] =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - s.last_heard).count();
  }
  return heard;
}

bus::AgentSummary AgentRegistry::Summary(const std::string& id, const AgentEntry& entry,
                                         int64_t last_heard_ms_ago) const {
  bus::AgentSummary summary{id,
                            entry.state,
                            entry.info.resource_pool,
                            entry.info.hostname,
                            entry.info.version,
                            entry.info.slots};
  summary.last_heard_ms_ago = last_heard_ms_ago;
  const TaskManager::AgentUsage usage = tasks_.Usage(id);
  summary.enabled = usage.enabled;
  summary.draining = usage.draining;
  summary.disabled_slots = usage.disabled_slots;
  summary.used_slots = static_cast<int32_t>(usage.used_slots);
  summary.utilization = entry.utilization;
  summary.interruption = entry.interruption;
  summary.slot_tasks = usage.slot_tasks;
  summary.registered_at = entry.registered_at;
  return summary;
}

bus::AgentList AgentRegistry::List() const {
  bus::AgentList list;
  const auto heard = LastHeardMsAgo();
  for (const auto& [id, entry] : agents_) {
    auto it = heard.find(id);
    list.agents.push_back(Summary(id, entry, it == heard.end() ? 0 : it->second));
  }
  return list;
}

}  // namespace det::master
