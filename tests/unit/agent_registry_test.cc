// The agent registry's state machine as an actor on its own thread, with its records in memory
// (tests/testing/in_memory_cluster_records.h), agents as bus clients on the same simulated clock,
// and users' calls over its inproc endpoint: placement on a registered agent, answers held until
// stored, a workload's states and end, and an agent lost past its reconnect window.
#include "master/cluster/agent_registry.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "bus/rpc_client.h"
#include "tests/testing/fake_agent.h"
#include "tests/testing/in_memory_cluster_records.h"
#include "tests/testing/test_util.h"

namespace det::master {
namespace {

using namespace std::chrono_literals;
using testing::FakeAgent;

class AgentRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_unique<AgentRegistry>(context_, clock_, FakeAgent::Timing(), 1 << 20,
                                                records_, "http://master:8080", ResourcesConfig{},
                                                AllocationTokens("secret"));
    auto bound =
        registry_->Bind(testing::InprocEndpoint("agents"), {}, testing::InprocEndpoint("events"));
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    endpoint_ = *bound;
    registry_->Start();
  }
  void TearDown() override { registry_->Stop(); }

  // An agent that registered.
  std::unique_ptr<FakeAgent> Join(const std::string& id) {
    auto agent = std::make_unique<FakeAgent>(context_, id, endpoint_, clock_);
    EXPECT_TRUE(agent->Start().ok());
    EXPECT_TRUE(
        Until([&] { agent->Pump(); }, [&] { return records_.Read().agent_states.count(id) > 0; }));
    return agent;
  }
  // Pumps until `done` (real time, bounded: the registry's thread does the work).
  static bool Until(const std::function<void()>& pump, const std::function<bool()>& done) {
    return testing::PumpUntil(pump, done, 5000ms);
  }
  // det cmd run, from another thread: the answer arrives when the registry gives it.
  std::future<Result<bus::CommandRunReply>> Submit(bus::CommandRunRequest request) {
    return std::async(std::launch::async, [this, request] {
      bus::RpcClient client(context_, AgentRegistry::kQueryEndpoint, {},
                            {.timeout = 10s, .attempts = 1});
      return client.Call<bus::CommandRunRequest, bus::CommandRunReply>(request);
    });
  }

  zmq::context_t context_;
  SimulatedClock clock_;
  testing::InMemoryClusterRecords records_;
  std::unique_ptr<AgentRegistry> registry_;
  std::string endpoint_;
};

using States = std::vector<std::string>;

TEST_F(AgentRegistryTest, ACommandIsPlacedOnARegisteredAgentAndAnsweredOnlyOnceStored) {
  auto agent = Join("agent-1");
  records_.HoldStoring();
  auto answer = Submit({.entrypoint = {"true"}});
  ASSERT_TRUE(Until([&] { agent->Pump(); }, [&] { return !agent->starts.empty(); }))
      << "placed before it is stored: the store keeps order, so nothing is lost";
  EXPECT_EQ(answer.wait_for(200ms), std::future_status::timeout)
      << "the submitter hears of it only once its task is stored";
  records_.Store();
  ASSERT_EQ(answer.wait_for(5s), std::future_status::ready);
  Result<bus::CommandRunReply> reply = answer.get();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(agent->starts[0].task_id, reply->task_id);
  EXPECT_EQ(agent->starts[0].entrypoint, (std::vector<std::string>{"true"}));
  EXPECT_FALSE(agent->starts[0].session_token.empty()) << "each allocation gets its token";
  EXPECT_EQ(records_.Read().task_states.at(agent->starts[0].allocation_id), (States{"ASSIGNED"}));
}

TEST_F(AgentRegistryTest, AWorkloadsStatesAreRecordedInOrderAndItsEndIsConfirmedOnceStored) {
  auto agent = Join("agent-1");
  auto answer = Submit({.entrypoint = {"true"}});
  ASSERT_TRUE(Until([&] { agent->Pump(); }, [&] { return !agent->starts.empty(); }));
  ASSERT_TRUE(answer.get().ok());
  const bus::WorkloadStart start = agent->starts[0];
  for (std::string_view state :
       {bus::kWorkloadPulling, bus::kWorkloadStarting, bus::kWorkloadRunning}) {
    agent->Report(start, state);
  }
  agent->Report(start, bus::kWorkloadTerminated, 0);
  ASSERT_TRUE(Until([&] { agent->Pump(); },
                    [&] {
                      const auto states = records_.Read().task_states[start.allocation_id];
                      return !states.empty() && states.back() == "TERMINATED";
                    }));
  EXPECT_EQ(records_.Read().task_states.at(start.allocation_id),
            (States{"ASSIGNED", "PULLING", "STARTING", "RUNNING", "TERMINATED"}));
  EXPECT_EQ(records_.Read().tasks.at(start.task_id).exit_code, 0);
}

TEST_F(AgentRegistryTest, AnAgentLostPastItsReconnectWindowEndsItsTaskAsAgentFailed) {
  auto agent = Join("agent-1");
  auto answer = Submit({.entrypoint = {"sleep", "1000"}});
  ASSERT_TRUE(Until([&] { agent->Pump(); }, [&] { return !agent->starts.empty(); }));
  ASSERT_TRUE(answer.get().ok());
  const bus::WorkloadStart start = agent->starts[0];
  agent.reset();  // the agent's host is gone: no goodbye

  // Silence on the simulated clock, a second at a time (what the agent sent before it went may
  // still arrive and count as heard), each second given time to be noticed.
  auto lost = [&] {
    const auto states = records_.Read().agent_states["agent-1"];
    return !states.empty() && states.back() == "lost";
  };
  for (int second = 0; second < 20 && !lost(); ++second) {
    clock_.Advance(1s);
    (void)testing::PumpUntil([] {}, lost, 200ms);
  }
  ASSERT_TRUE(lost()) << "silent past the limit";
  EXPECT_NE(records_.Read().task_states.at(start.allocation_id).back(), "TERMINATED")
      << "a lost agent's work is kept for the reconnect window";

  clock_.Advance(25s);  // the reconnect window
  ASSERT_TRUE(Until([] {},
                    [&] {
                      const auto states = records_.Read().task_states[start.allocation_id];
                      return !states.empty() && states.back() == "TERMINATED";
                    }));
  const Task ended = records_.Read().tasks.at(start.task_id);
  EXPECT_EQ(ended.failure_type, bus::kFailureAgentFailed);
}

}  // namespace
}  // namespace det::master
