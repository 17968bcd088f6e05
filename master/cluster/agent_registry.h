#pragma once

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "bus/agent_channel_server.h"
#include "bus/catalog/agent.h"
#include "bus/catalog/autoscaler.h"
#include "bus/catalog/jobs.h"
#include "bus/catalog/master.h"
#include "bus/event_publisher.h"
#include "bus/rpc_server.h"
#include "master/auth/allocation_token.h"
#include "master/cluster/cluster_records.h"
#include "master/cluster/idle_tracker.h"
#include "master/cluster/registry_endpoint.h"
#include "master/cluster/task_manager.h"

namespace det::master {

// The agent registry: which agents exist, what they have, whether they are reachable, and the
// tasks placed on them (TaskManager), since both follow the same agent channel.
//
// Desired state: one entry per agent that registered, with its slots, in state connected or lost,
// and an `agent.state` event on the bus for every change (key "agent/<id>", so late subscribers
// get the current set from the snapshot). Actual state: the agent channel's sessions. It follows
// the channel: a register message records the agent, Lost marks it lost, Expired removes it (a
// tombstone event) once the reconnect window has passed. Tasks follow their agents: a lost agent
// gets no new work, an expired one's tasks end with AgentFailed. Every change is recorded through
// ClusterRecords (the store's thread: never waiting on the database) and task changes are published
// as `task.state`.
//
// Threading: an actor. Start() runs it on its own thread; other components reach it only through
// its inproc request endpoint (kQueryEndpoint) with the same rpc messages the CLI uses.
class AgentRegistry : private TaskManager::Listener {
 public:
  static constexpr const char* kQueryEndpoint = kRegistryEndpoint;

  // `records` outlive the registry; `master_address` is DET_MASTER for workloads; `resources` are
  // the pools agents may join and how each is scheduled; `tokens` issue each allocation's token.
  AgentRegistry(zmq::context_t& context, const Clock& clock, const bus::AgentChannelConfig& channel,
                int64_t max_message_bytes, ClusterRecords& records, std::string master_address,
                const ResourcesConfig& resources, AllocationTokens tokens);
  ~AgentRegistry();

  // Binds the agent channel (TCP) and the query endpoint, connects the event publisher.
  Result<std::string> Bind(const std::string& agent_endpoint, const bus::SocketSecurity& security,
                           const std::string& event_publish_endpoint);
  // Before Start(): tasks a previous master left running. Their agents have the reconnect window
  // to register; those that do not are removed (their tasks end with AgentFailed).
  void Restore(std::vector<Task> tasks);
  // Before Start(): publishes each pool's `provider:` section for the autoscaler (retained, key
  // "pool/<name>").
  void PublishProviders(const std::vector<bus::PoolProviderEvent>& providers);
  void Start();
  void Stop();

 private:
  struct AgentEntry {
    bus::AgentRegister info;
    std::string state;  // "connected" | "lost"
    std::vector<bus::SlotUtilization> utilization;
    std::string interruption;   // what the agent's cloud said when it announced the machine's end
    int64_t registered_at = 0;  // Unix nanoseconds: when it registered last
  };

  void Run();
  // Runs a scheduling pass when one is pending and the spacing after the last has passed.
  void ScheduleWhenDue();
  // How long the loop may wait for a message: until the timers, or a pending pass, are due.
  std::chrono::milliseconds PollTimeout() const;
  void HandleQueries();
  // For the methods that change tasks: their answer waits until the store has committed what
  // they changed, so that nothing acknowledged is lost if the master dies the moment after.
  bus::RpcServer::Hold UntilStored();
  void OnChannelEvent(bus::AgentChannelServer::Event& event);
  void OnAgentMessage(const std::string& agent_id, const bus::Envelope& message);
  // An agent that says it is leaving is forgotten at once when it holds no work.
  void OnLeaving(const std::string& agent_id, const bus::AgentLeaving& leaving);
  // The agent's machine is about to go: no new work for it, its trials told to checkpoint and
  // stop (SIGTERM shortly before the deadline if they have not).
  void OnInterruption(const std::string& agent_id, const bus::AgentInterruption& notice);
  // Drops the agent: tombstone on the bus, `why` recorded, its place in the scheduler gone.
  void Forget(const std::string& agent_id, const std::string& why);
  void SendNotices();
  void ExpireAwaitedAgents();
  void OnRegister(const std::string& agent_id, const bus::AgentRegister& info);
  // Why the agent may not join as it registered (unknown pool; other devices or pool than the
  // place the master still holds for it), or empty.
  std::string RefusalReason(const std::string& agent_id, const bus::AgentRegister& info) const;
  Result<bus::AgentReply> Enable(const bus::AgentEnableRequest& request);
  Result<bus::AgentReply> EnableSlot(const bus::SlotEnableRequest& request);
  bus::AgentSummary Summary(const std::string& agent_id, const AgentEntry& entry,
                            int64_t last_heard_ms_ago) const;
  std::map<std::string, int64_t> LastHeardMsAgo() const;
  void PublishIdle();
  template <class Notice>
  void Notify(const std::string& agent_id, std::string reason = "");
  void SetState(const std::string& agent_id, const std::string& state);
  // Persists the agent's state and its connection history (a connection ends when it is lost).
  void RecordConnection(const std::string& agent_id, const std::string& state);
  void PublishState(const std::string& agent_id, const AgentEntry& entry, bool tombstone);
  bus::AgentList List() const;
  int64_t NowNs() const { return UnixNanos(clock_.WallNow()); }

  // TaskManager::Listener
  void StartWorkload(const std::string& agent_id, const bus::WorkloadStart& start) override;
  void KillWorkload(const std::string& agent_id, const bus::WorkloadKill& kill) override;
  void TaskChanged(const Task& task) override;
  void TaskSettingsChanged(const Task& task) override;
  void PendingChanged(const bus::ClusterPending& pending) override;

  const Clock& clock_;
  bus::AgentChannelServer channel_;
  bus::RpcServer queries_;
  bus::EventPublisher publisher_;
  ClusterRecords& records_;
  TaskManager tasks_;
  std::map<std::string, AgentEntry> agents_;
  std::map<std::string, MonoTime> awaited_;  // restored agents -> when they count as gone
  std::set<std::string> reconcile_;          // agents whose next registration is complete
  Duration reconnect_window_;
  std::vector<std::string> pools_;
  std::map<std::string, Duration> pool_reconnect_waits_;  // pools with their own
  IdleTracker idle_;
  AllocationTokens tokens_;  // each workload's DET_SESSION_TOKEN
  MonoTime next_idle_check_{};
  MonoTime next_timers_{};
  MonoTime next_pass_{};  // real time (RealClock): the spacing spends CPU
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace det::master
