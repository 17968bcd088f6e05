#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <vector>
#include <zmq.hpp>

#include "agent/agent_config.h"
#include "agent/interruption_watch.h"
#include "agent/log_shipper.h"
#include "agent/shim_launcher.h"
#include "agent/utilization.h"
#include "agent/workload_runner.h"
#include "bus/agent_channel_client.h"
#include "bus/catalog/agent.h"
#include "bus/rpc_client.h"

namespace det::agent {

// det-agent's main loop: discovers its slots, joins the master over the agent channel, registers
// after every welcome, runs the workloads the master starts (WorkloadRunner), ships their output
// (LogShipper) and reports their states, and keeps going across master restarts.
//
// Workloads outlive the agent process: a restarted agent adopts them (WorkloadRunner::Recover).
//
// Run() returns 0 when `stop` is set, 2 when it cannot start (bad security config, no devices of
// the requested slot type), 3 when it gave up reconnecting (after running
// hooks.on_connection_lost), 4 when the master told it to shut down (unknown resource pool, or
// devices or pool changed while the master held its place).
class Agent {
 public:
  Agent(AgentConfig config, const Clock& clock);
  int Run(const std::atomic<bool>& stop);

 private:
  // The runtimes and the runner over them; false (said in the log) when the agent cannot run
  // workloads as configured (no Docker engine, an unknown default account).
  bool StartRunner();
  bus::AgentRegister Registration() const;
  void OnEvent(bus::AgentChannelClient::Event& event);
  void OnMessage(const bus::Envelope& message);
  void Send(WorkloadRunner::Reports& reports);
  // Stopping with no workload running: tells the master (and waits up to a second for its
  // acknowledgement) so it forgets this agent now instead of after the reconnect window.
  void SayGoodbye();
  void PollOnce();
  // Passes a notice of the machine's end to the master once it comes (and after every welcome).
  void ForwardInterruption();
  // Sends again, while connected, log batches unconfirmed for kLogResendAfter.
  void ResendOverdueLogs();
  void RunConnectionLostHook() const;

  AgentConfig config_;
  const Clock& clock_;
  zmq::context_t context_;
  std::vector<bus::SlotInfo> slots_;
  LogShipper shipper_{bus::RandomId()};
  // What workloads run in (workload_runtime.h), declared before the runner that uses them.
  std::unique_ptr<ShimLauncher> shims_;
  std::unique_ptr<WorkloadRuntime> processes_;
  std::unique_ptr<WorkloadRuntime> containers_;  // null without the docker runtime
  std::unique_ptr<WorkloadRunner> runner_;
  std::unique_ptr<bus::AgentChannelClient> channel_;
  std::unique_ptr<UtilizationSampler> sampler_;
  std::unique_ptr<InterruptionWatch> interruption_watch_;
  std::optional<InterruptionNotice> interruption_;  // forwarded to the master
  std::string shutdown_reason_;                     // set when the master tells the agent to stop
  std::vector<zmq::pollitem_t> poll_items_;
  // Ended workloads whose end the master has not confirmed recording, by allocation.
  std::map<std::string, bus::WorkloadState> unrecorded_ends_;
};

}  // namespace det::agent
