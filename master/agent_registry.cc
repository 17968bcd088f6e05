#include "master/agent_registry.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "master/task_persistence.h"
#include "storage/agents_repo.h"

namespace det::master {
namespace {

std::string SlotsJson(const std::vector<bus::SlotInfo>& slots) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& slot : slots) {
    all.push_back({{"id", slot.id},
                   {"type", slot.type},
                   {"brand", slot.brand},
                   {"uuid", slot.uuid},
                   {"memory_mib", slot.memory_mib}});
  }
  return all.dump();
}

}  // namespace

using ChannelEvent = bus::AgentChannelServer::Event;

AgentRegistry::AgentRegistry(zmq::context_t& context, const Clock& clock,
                             const MasterBusConfig& config, Store& store,
                             std::string master_address)
    : clock_(clock),
      channel_(context, "master", clock, config.channel,
               bus::SocketLimits{.max_message_bytes = config.max_message_bytes}),
      queries_(context, "agent-registry", clock),
      publisher_(context, "master.agent-registry", clock),
      store_(store),
      tasks_(*this, std::move(master_address)),
      reconnect_window_(config.channel.reconnect_window) {
  HandleQueries();
}

void AgentRegistry::HandleQueries() {
  using bus::RpcContext;
  queries_.Handle<bus::AgentListRequest, bus::AgentList>(
      [this](const RpcContext&, const bus::AgentListRequest&) -> Result<bus::AgentList> {
        return List();
      });
  queries_.Handle<bus::CommandRunRequest, bus::CommandRunReply>(
      [this](const RpcContext&, const bus::CommandRunRequest& r) -> Result<bus::CommandRunReply> {
        DET_ASSIGN_OR_RETURN(
            std::string id,
            tasks_.Submit({r.entrypoint, r.slots, r.resource_pool, r.env}, NowNs()));
        return bus::CommandRunReply{id};
      });
  queries_.Handle<bus::TaskListRequest, bus::TaskList>(
      [this](const RpcContext&, const bus::TaskListRequest&) -> Result<bus::TaskList> {
        return bus::TaskList{tasks_.List()};
      });
  queries_.Handle<bus::TaskGetRequest, bus::TaskGetReply>(
      [this](const RpcContext&, const bus::TaskGetRequest& r) -> Result<bus::TaskGetReply> {
        const Task* task = tasks_.Find(r.task_id);
        if (!task) return NotFound("task " + r.task_id + " not found");
        return bus::TaskGetReply{task->Summary()};
      });
  queries_.Handle<bus::TaskKillRequest, bus::TaskKillReply>(
      [this](const RpcContext&, const bus::TaskKillRequest& r) -> Result<bus::TaskKillReply> {
        DET_ASSIGN_OR_RETURN(std::string state, tasks_.Kill(r.task_id, NowNs()));
        return bus::TaskKillReply{state};
      });
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

void AgentRegistry::Restore(std::vector<Task> tasks) {
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
  std::vector<ChannelEvent> events;
  while (!stop_) {
    zmq::pollitem_t items[] = {{channel_.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {queries_.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {publisher_.socket().handle(), 0, ZMQ_POLLIN, 0}};
    bus::Poll(items, 3, std::chrono::milliseconds(100));
    events.clear();
    if (items[0].revents & ZMQ_POLLIN) channel_.Receive(&events);
    if (items[1].revents & ZMQ_POLLIN) queries_.Receive();
    publisher_.Pump();
    channel_.Tick(&events);
    for (auto& event : events) OnChannelEvent(event);
    SendNotices();
    ExpireAwaitedAgents();
  }
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
      tasks_.SetAgentSchedulable(event.agent_id, false);
      return;
    case ChannelEvent::Kind::kExpired:
      spdlog::warn("agent {} gone: did not reconnect within the reconnect window", event.agent_id);
      if (auto it = agents_.find(event.agent_id); it != agents_.end()) {
        PublishState(event.agent_id, it->second, /*tombstone=*/true);
        agents_.erase(it);
      }
      tasks_.RemoveAgent(event.agent_id, NowNs());
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
    store_.EnqueueLogs(agent_id, std::move(*logs));
  } else if (message.is(bus::WorkloadState::kType)) {
    auto state = message.Decode<bus::WorkloadState>();
    if (!state.ok()) return complain(state.status());
    tasks_.OnWorkloadState(agent_id, *state, NowNs());
    if (state->state == bus::kWorkloadTerminated) {
      store_.EnqueueNotice({agent_id, state->allocation_id, 0});
    }
  } else if (message.is(bus::AgentRegister::kType)) {
    auto info = message.Decode<bus::AgentRegister>();
    if (!info.ok()) return complain(info.status());
    OnRegister(agent_id, *info);
  } else {
    spdlog::debug("agent {}: ignoring {}", agent_id, message.type);
  }
}

void AgentRegistry::SendNotices() {
  for (const Store::Notice& n : store_.TakeNotices()) {
    if (n.batch > 0) {
      (void)channel_.SendBestEffort(
          n.agent_id, bus::WorkloadLogsCommitted{n.allocation_id, n.incarnation, n.batch});
    } else {
      (void)channel_.SendBestEffort(n.agent_id, bus::WorkloadEndRecorded{n.allocation_id});
    }
  }
}

void AgentRegistry::StartWorkload(const std::string& agent_id, const bus::WorkloadStart& start) {
  if (Status sent = channel_.SendCommand(agent_id, start); !sent.ok()) {
    spdlog::error("cannot start {} on agent {}: {}", start.allocation_id, agent_id, sent.message());
  }
}

void AgentRegistry::KillWorkload(const std::string& agent_id, const bus::WorkloadKill& kill) {
  if (Status sent = channel_.SendCommand(agent_id, kill); !sent.ok()) {
    spdlog::error("cannot stop {} on agent {}: {}", kill.allocation_id, agent_id, sent.message());
  }
}

void AgentRegistry::TaskChanged(const Task& task) {
  store_.Enqueue(PersistTaskChange(task));
  Status published = publisher_.Publish(bus::TaskStateEvent{task.Summary()});
  if (!published.ok()) spdlog::warn("agent registry: {}", published.message());
}

void AgentRegistry::OnRegister(const std::string& agent_id, const bus::AgentRegister& info) {
  AgentEntry& entry = agents_[agent_id];
  entry.info = info;
  entry.state = "connected";
  spdlog::info("agent {} registered: {} slots in pool {}, version {}", agent_id, info.slots.size(),
               info.resource_pool, info.version);
  PublishState(agent_id, entry, /*tombstone=*/false);
  std::vector<std::string> slot_ids;
  for (const auto& slot : info.slots) slot_ids.push_back(slot.id);
  awaited_.erase(agent_id);
  tasks_.SetAgent(agent_id, info.resource_pool, slot_ids);
  tasks_.Reconcile(agent_id, info.workloads, reconcile_.erase(agent_id) > 0, NowNs());
  for (const bus::WorkloadState& workload : info.workloads) {
    if (workload.state == bus::kWorkloadTerminated) {
      store_.EnqueueNotice({agent_id, workload.allocation_id, 0});
    }
  }
  const int64_t now = NowNs();
  store_.Enqueue([agent_id, info, now](pqxx::work& tx) {
    storage::UpsertAgent(tx,
                         {agent_id, info.resource_pool, info.hostname, info.version,
                          SlotsJson(info.slots), "connected"},
                         now);
  });
}

void AgentRegistry::SetState(const std::string& agent_id, const std::string& state) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || it->second.state == state) return;
  it->second.state = state;
  PublishState(agent_id, it->second, /*tombstone=*/false);
}

void AgentRegistry::PublishState(const std::string& agent_id, const AgentEntry& entry,
                                 bool tombstone) {
  bus::AgentStateEvent event{agent_id, tombstone ? "gone" : entry.state, entry.info.resource_pool,
                             static_cast<int32_t>(entry.info.slots.size())};
  Status published = publisher_.Publish(event, "agent/" + agent_id, tombstone);
  if (!published.ok()) spdlog::warn("agent registry: {}", published.message());
}

bus::AgentList AgentRegistry::List() const {
  bus::AgentList list;
  std::map<std::string, MonoTime> heard;
  for (const auto& s : channel_.Sessions()) heard[s.agent_id] = s.last_heard;
  for (const auto& [id, entry] : agents_) {
    bus::AgentSummary summary{id,
                              entry.state,
                              entry.info.resource_pool,
                              entry.info.hostname,
                              entry.info.version,
                              entry.info.slots};
    if (auto it = heard.find(id); it != heard.end()) {
      summary.last_heard_ms_ago =
          std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - it->second).count();
    }
    list.agents.push_back(std::move(summary));
  }
  return list;
}

}  // namespace det::master
