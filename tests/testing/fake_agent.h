#pragma once

// An agent of one CPU slot on the bus, for the master's actor tests (agent registry, experiment
// service): it registers on connecting and keeps every workload start and kill it is sent; the
// test reports the workloads' states. Not thread-safe: the test's thread pumps it.

#include <string>
#include <vector>

#include "bus/agent_channel_client.h"
#include "bus/catalog/agent.h"
#include "bus/catalog/workload.h"

namespace det::testing {

class FakeAgent {
 public:
  // The bus timing the actor tests give the registry and their agents.
  static bus::AgentChannelConfig Timing() {
    using namespace std::chrono_literals;
    return {1s, 5s, 25s, 5s};
  }

  FakeAgent(zmq::context_t& context, const std::string& id, const std::string& endpoint,
            const Clock& clock)
      : client_(context, id, endpoint, bus::SocketSecurity{}, clock, Timing(),
                bus::BackoffPolicy{std::chrono::seconds(1), std::chrono::seconds(30), 2.0, 0.5},
                /*max_attempts=*/0) {}

  Status Start() { return client_.Start(); }
  // Reads and answers what arrived (a welcome: the registration).
  void Pump() {
    std::vector<Event> events;
    client_.Receive(&events);
    client_.Tick(&events);
    for (Event& event : events) {
      if (event.kind == Event::Kind::kConnected) {
        client_.SendReliable(
            bus::AgentRegister{"test", "default", "host-1", {{"cpu0", "cpu", "cpu", "", 0}}, {}});
      } else if (event.kind == Event::Kind::kMessage &&
                 event.message.is(bus::WorkloadStart::kType)) {
        starts.push_back(*event.message.Decode<bus::WorkloadStart>());
      } else if (event.kind == Event::Kind::kMessage &&
                 event.message.is(bus::WorkloadKill::kType)) {
        kills.push_back(event.message.Decode<bus::WorkloadKill>()->allocation_id);
      }
    }
    client_.FlushAcks();
  }
  void Report(const bus::WorkloadStart& start, std::string_view state, int exit_code = 0) {
    client_.SendReliable(bus::WorkloadState{start.allocation_id, start.task_id, std::string(state),
                                            exit_code, "", ""});
  }

  std::vector<bus::WorkloadStart> starts;
  std::vector<std::string> kills;  // allocation ids

 private:
  using Event = bus::AgentChannelClient::Event;
  bus::AgentChannelClient client_;
};

}  // namespace det::testing
