#include "agent/agent.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <thread>

#include "agent/devices.h"
#include "agent/docker/docker_client.h"
#include "agent/docker_runtime.h"
#include "agent/process_runtime.h"
#include "agent/workload_spawn.h"
#include "common/process.h"
#include "common/version.h"

namespace det::agent {
namespace {

constexpr Duration kLogResendAfter = std::chrono::seconds(30);

}  // namespace

Agent::Agent(AgentConfig config, const Clock& clock) : config_(std::move(config)), clock_(clock) {}

bus::AgentRegister Agent::Registration() const {
  bus::AgentRegister registration{kVersion, config_.resource_pool, HostName(), slots_,
                                  runner_->States()};
  for (const auto& [id, state] : unrecorded_ends_) registration.workloads.push_back(state);
  return registration;
}

bool Agent::StartRunner() {
  const bool docker = config_.container_runtime == ContainerRuntime::kDocker;
  if (docker) {
    Result<std::string> api = DockerClient(config_.docker.socket).Ping();
    if (!api.ok()) {
      spdlog::critical("container_runtime docker: {}", api.status().message());
      return false;
    }
    spdlog::info("container runtime: the Docker engine on {} (API {})", config_.docker.socket,
                 *api);
  } else if (geteuid() != 0) {
    spdlog::warn(
        "not root: trial runs get no private /run/determined (a mount namespace needs "
        "CAP_SYS_ADMIN), so Determined's library runs off-cluster in them; det_harness works");
  }
  WorkloadRunner::Options runner{config_.agent_id, config_.work_dir, slots_};
  if (geteuid() == 0) {
    auto account = HostAccount(config_.default_task_user);
    if (!account.ok()) {
      spdlog::critical("default_task_user: {}", account.status().message());
      return false;
    }
    runner.default_account = *account;
    spdlog::info("tasks without an account of their own run as {} (uid {}, gid {})", account->user,
                 account->uid, account->gid);
  }
  const WorkloadHost host{config_.agent_id, &slots_};
  shims_ = std::make_unique<ShimLauncher>(BesideThisProgram(kWorkloadShimProgram));
  processes_ = std::make_unique<ProcessRuntime>(*shims_, host);
  if (docker) {
    containers_ = std::make_unique<DockerRuntime>(
        *shims_, DockerRuntime::Options{
                     .containers = {host, config_.docker.socket, config_.docker.network_mode,
                                    config_.container_master_host, config_.container_master_port}});
  }
  runner_ = std::make_unique<WorkloadRunner>(
      std::move(runner), clock_, shipper_,
      WorkloadRunner::Runtimes{processes_.get(), containers_.get()});
  return true;
}

int Agent::Run(const std::atomic<bool>& stop) {
  auto security = bus::ResolveClientSecurity(config_.security);
  if (!security.ok()) {
    spdlog::critical("{}", security.status().message());
    return 2;
  }
  KeepFromTasks(config_.security.key_file, "the agent's key");
  auto slots = DiscoverSlots(config_.devices, &RunCommand);
  if (!slots.ok()) {
    spdlog::critical("device discovery: {}", slots.status().message());
    return 2;
  }
  slots_ = std::move(*slots);
  for (const auto& slot : slots_) {
    spdlog::info("slot {}: {} {}{}", slot.id, slot.type, slot.brand,
                 slot.uuid.empty() ? "" : " (" + slot.uuid + ")");
  }
  if (!StartRunner()) return 2;
  bus::BackoffPolicy backoff{config_.agent_reconnect_backoff, std::chrono::minutes(1)};
  channel_ = std::make_unique<bus::AgentChannelClient>(
      context_, config_.agent_id, bus::TcpEndpoint(config_.master_host, config_.master_port),
      *security, clock_, config_.channel, backoff, config_.agent_reconnect_attempts);
  // After a master restart this agent re-sends every unconfirmed log batch itself, oldest first.
  channel_->ResendsOnMasterRestart(std::string(bus::WorkloadLogs::kType));
  if (Status started = channel_->Start(); !started.ok()) {
    spdlog::critical("{}", started.message());
    return 2;
  }
  spdlog::info("det-agent {} ({}) joining master {}:{} with {} slots", kVersion, config_.agent_id,
               config_.master_host, config_.master_port, slots_.size());
  sampler_ = std::make_unique<UtilizationSampler>(slots_, config_.utilization_interval, &RunCommand,
                                                  clock_);
  if (!config_.interruption_notice.empty()) {
    Result<InterruptionProbe> probe =
        CloudInterruptionProbe(config_.interruption_notice, Environment::Process(), clock_);
    if (!probe.ok()) {
      spdlog::critical("{}", probe.status().message());
      return 2;
    }
    interruption_watch_ =
        std::make_unique<InterruptionWatch>(std::move(*probe), config_.interruption_poll_interval);
    spdlog::info("watching {}'s metadata for the end of this machine", config_.interruption_notice);
  }
  WorkloadRunner::Reports recovered;
  runner_->Recover(&recovered);
  Send(recovered);
  while (!stop.load()) {
    if (channel_->state() == bus::AgentChannelClient::State::kGaveUp) {
      spdlog::error("gave up reconnecting to the master after {} attempts",
                    config_.agent_reconnect_attempts);
      RunConnectionLostHook();
      return 3;  // the workloads keep running; a new agent adopts them
    }
    if (!shutdown_reason_.empty()) {
      spdlog::critical("the master told this agent to shut down: {}", shutdown_reason_);
      return 4;
    }
    PollOnce();
  }
  SayGoodbye();
  return 0;
}

void Agent::SayGoodbye() {
  if (channel_->state() != bus::AgentChannelClient::State::kConnected) return;
  for (const bus::WorkloadState& state : runner_->States()) {
    if (state.state != bus::kWorkloadTerminated) return;  // the master keeps its place
  }
  channel_->SendReliable(bus::AgentLeaving{"the agent was stopped"});
  const Clock& real = RealClock::Instance();  // a second of the socket's time, as Poll's is
  const MonoTime deadline = real.Now() + std::chrono::seconds(1);
  while (channel_->unacknowledged() > 0 && real.Now() < deadline) {
    PollOnce();
  }
}

void Agent::PollOnce() {
  poll_items_.clear();
  if (zmq::socket_t* socket = channel_->socket()) {
    poll_items_.push_back({socket->handle(), 0, ZMQ_POLLIN, 0});
  }
  runner_->AppendPollItems(&poll_items_);
  auto timeout = std::chrono::milliseconds(100);
  const MonoTime due = shipper_.NextDue();
  if (due != MonoTime::max()) {
    timeout = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(due - clock_.Now()),
                         std::chrono::milliseconds(0), timeout);
  }
  if (poll_items_.empty()) {
    std::this_thread::sleep_for(timeout);
  } else {
    bus::Poll(poll_items_.data(), poll_items_.size(), timeout);
  }
  std::vector<bus::AgentChannelClient::Event> events;
  channel_->Receive(&events);
  channel_->Tick(&events);
  for (auto& event : events) OnEvent(event);
  WorkloadRunner::Reports reports;
  runner_->Tick(poll_items_, &reports);
  Send(reports);
  ResendOverdueLogs();
  if (auto sample = sampler_->Take()) (void)channel_->SendBestEffort(*sample);
  ForwardInterruption();
  channel_->FlushAcks();  // what this turn received and sent nothing after
}

void Agent::ResendOverdueLogs() {
  // A batch the master received but could not store (its database away longer than it retries)
  // is never confirmed; while it is not, the allocation's window stays full and its output unread.
  if (channel_->state() != bus::AgentChannelClient::State::kConnected) return;
  for (const auto& batch : shipper_.Overdue(clock_.Now(), kLogResendAfter)) {
    channel_->SendReliable(batch);
  }
}

void Agent::ForwardInterruption() {
  if (!interruption_watch_ || interruption_) return;
  interruption_ = interruption_watch_->notice();
  if (!interruption_) return;
  spdlog::warn("{}: telling the master", interruption_->reason);
  channel_->SendReliable(bus::AgentInterruption{interruption_->reason, interruption_->deadline});
}

void Agent::Send(WorkloadRunner::Reports& reports) {
  for (const auto& batch : reports.logs) channel_->SendReliable(batch);
  for (const auto& state : reports.states) {
    if (state.state == bus::kWorkloadTerminated) unrecorded_ends_[state.allocation_id] = state;
    channel_->SendReliable(state);
  }
}

void Agent::OnEvent(bus::AgentChannelClient::Event& event) {
  using Kind = bus::AgentChannelClient::Event::Kind;
  switch (event.kind) {
    case Kind::kConnected:
      spdlog::info("connected to the master{}; registering",
                   event.master_restarted ? " (master restarted)" : "");
      // A restarted master may not have stored what the old one acknowledged: send it again,
      // before the registration, whose ended workloads the master confirms only after these.
      if (event.master_restarted) {
        for (const auto& batch : shipper_.Unconfirmed()) channel_->SendReliable(batch);
      }
      channel_->SendReliable(Registration());
      if (interruption_) {
        channel_->SendReliable(
            bus::AgentInterruption{interruption_->reason, interruption_->deadline});
      }
      return;
    case Kind::kDisconnected:
      spdlog::warn("lost the master; reconnecting");
      return;
    case Kind::kGaveUp:
      return;
    case Kind::kMessage:
      OnMessage(event.message);
      return;
  }
}

void Agent::OnMessage(const bus::Envelope& message) {
  if (message.is(bus::WorkloadStart::kType)) {
    auto start = message.Decode<bus::WorkloadStart>();
    if (!start.ok()) {
      spdlog::warn("bad workload.start: {}", start.status().message());
      return;
    }
    WorkloadRunner::Reports reports;
    runner_->Start(*start, &reports);
    Send(reports);
  } else if (message.is(bus::WorkloadKill::kType)) {
    auto kill = message.Decode<bus::WorkloadKill>();
    if (kill.ok()) runner_->Kill(*kill);
  } else if (message.is(bus::WorkloadLogsCommitted::kType)) {
    auto committed = message.Decode<bus::WorkloadLogsCommitted>();
    if (committed.ok()) {
      shipper_.Confirmed(committed->allocation_id, committed->incarnation, committed->batch);
      runner_->OnLogsConfirmed(committed->allocation_id);
    }
  } else if (message.is(bus::WorkloadEndRecorded::kType)) {
    auto recorded = message.Decode<bus::WorkloadEndRecorded>();
    if (recorded.ok()) {
      unrecorded_ends_.erase(recorded->allocation_id);
      runner_->Remove(recorded->allocation_id);
    }
  } else if (message.is(bus::AgentShutdown::kType)) {
    auto shutdown = message.Decode<bus::AgentShutdown>();
    shutdown_reason_ = shutdown.ok() ? shutdown->reason : "(unreadable reason)";
  } else if (message.is(bus::AgentPing::kType)) {
    auto ping = message.Decode<bus::AgentPing>();
    if (ping.ok()) channel_->SendReliable(bus::AgentEcho{ping->nonce});
  } else {
    spdlog::debug("ignoring {} from the master", message.type);
  }
}

void Agent::RunConnectionLostHook() const {
  if (config_.on_connection_lost.empty()) return;
  spdlog::info("running hooks.on_connection_lost: {}", config_.on_connection_lost[0]);
  auto ran = RunCommand(config_.on_connection_lost);
  if (!ran.ok()) spdlog::error("hooks.on_connection_lost: {}", ran.status().message());
}

}  // namespace det::agent
