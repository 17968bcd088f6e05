// Operators' control of agents with real processes: disable (with and without drain), slots,
// resource pools, and agents that come back different.
#include <nlohmann/json.hpp>

#include "bus/catalog/agent.h"
#include "bus/catalog/tasks.h"
#include "bus/event_subscriber.h"
#include "tests/testing/cluster_fixture.h"

namespace det {
namespace {

using testing::ClusterProcessTest;
using namespace std::chrono_literals;

class AgentControlTest : public ClusterProcessTest {
 protected:
  std::string ExtraBusConfig() const override { return "  agent_reconnect_wait: 5s\n"; }

  std::string Run(const std::string& entrypoint) {
    auto reply = nlohmann::json::parse(Det("--json cmd run '" + entrypoint + "'"), nullptr, false);
    return reply.is_object() ? reply.value("task_id", "") : "";
  }
  nlohmann::json Task(const std::string& id) {
    auto tasks = nlohmann::json::parse(Det("--json task list"), nullptr, false);
    if (tasks.is_array()) {
      for (const auto& t : tasks) {
        if (t.value("id", "") == id) return t;
      }
    }
    return nlohmann::json::object();
  }
  nlohmann::json Wait(const std::string& id) {
    return nlohmann::json::parse(Det("--json task wait " + id), nullptr, false);
  }
  void WaitConnected(const std::string& agent) {
    ASSERT_TRUE(WaitFor("--json agent list", "{\"id\":\"" + agent + "\",\"state\":\"connected\""))
        << Det("agent list") << Log(agent + ".log");
  }
};

TEST_F(AgentControlTest, DisableWithoutDrainKillsRunningTasksAndQueuesNewOnes) {
  auto agent = StartAgent("agent-k", 1);
  WaitConnected("agent-k");
  const std::string running = Run("echo up; exec sleep 30");
  ASSERT_TRUE(WaitFor("task logs " + running, "up"));
  EXPECT_NE(Det("agent disable agent-k").find("enabled no"), std::string::npos);
  nlohmann::json killed = Wait(running);
  EXPECT_EQ(killed.value("failure_type", ""), "Killed") << killed.dump();
  EXPECT_NE(killed.value("message", "").find("disabled"), std::string::npos) << killed.dump();

  const std::string queued = Run("true");
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(Task(queued).value("state", ""), "QUEUED");
  Det("agent enable agent-k");
  EXPECT_EQ(Wait(queued).value("failure_type", "?"), "");
}

TEST_F(AgentControlTest, DisableWithDrainLetsRunningTasksFinish) {
  auto agent = StartAgent("agent-d", 1);
  WaitConnected("agent-d");
  const std::string running = Run("echo up; sleep 1; echo finished");
  ASSERT_TRUE(WaitFor("task logs " + running, "up"));
  EXPECT_NE(Det("agent disable --drain agent-d").find("enabled draining"), std::string::npos);
  const std::string queued = Run("true");
  nlohmann::json finished = Wait(running);
  EXPECT_EQ(finished.value("failure_type", "?"), "") << finished.dump();
  EXPECT_NE(Det("task logs " + running).find("finished"), std::string::npos);
  EXPECT_EQ(Task(queued).value("state", ""), "QUEUED");
  EXPECT_NE(Det("--json agent list").find("\"enabled\":false"), std::string::npos)
      << Det("agent list");
  Det("agent enable agent-d");
  EXPECT_EQ(Wait(queued).value("failure_type", "?"), "");
}

TEST_F(AgentControlTest, DisabledSlotGetsNoNewWork) {
  auto agent = StartAgent("agent-s", 2);
  WaitConnected("agent-s");
  EXPECT_NE(Det("slot disable agent-s cpu0").find("1 disabled"), std::string::npos);
  for (int i = 0; i < 3; ++i) {
    const std::string id = Run("echo $DET_SLOT_IDS");
    EXPECT_EQ(Wait(id).value("failure_type", "?"), "");
    EXPECT_NE(Det("task logs " + id).find("cpu1"), std::string::npos) << Det("task logs " + id);
  }
  EXPECT_NE(Det("slot disable agent-s cpu9").find("has no slot cpu9"), std::string::npos);
  EXPECT_NE(Det("agent disable nope").find("agent nope not found"), std::string::npos);
}

TEST_F(AgentControlTest, AgentOfAnUnknownPoolIsToldWhichPoolsExistAndStops) {
  auto agent = StartAgent("agent-p", 1, "gpus");
  ASSERT_TRUE(WaitForLog("agent-p.log", "told this agent to shut down"));
  EXPECT_NE(Log("agent-p.log")
                .find("resource pool \"gpus\" is not configured; known pools: "
                      "default"),
            std::string::npos)
      << Log("agent-p.log");
  EXPECT_EQ(agent->Stop(), 4);
}

TEST_F(AgentControlTest, AgentThatComesBackWithOtherDevicesIsShutDown) {
  auto agent = StartAgent("agent-c", 2);
  WaitConnected("agent-c");
  agent->Stop(SIGKILL);
  agent = StartAgent("agent-c", 3);  // within the reconnect window, with another slot
  ASSERT_TRUE(WaitForLog("agent-c.log", "told this agent to shut down"));
  EXPECT_NE(Log("agent-c.log").find("came back with other devices"), std::string::npos);
  EXPECT_EQ(agent->Stop(), 4);
}

}  // namespace
}  // namespace det

namespace det {
namespace {

// Collects the master's events from the bus, as the autoscaler would.
class EventLog {
 public:
  EventLog(const std::string& subscribe, const std::string& snapshot)
      : subscriber_(context_, "test", {"", subscribe, snapshot}, {}, RealClock::Instance(),
                    {"agent.", "task.", "cluster."}) {
    EXPECT_TRUE(subscriber_.Start().ok());
  }
  // Pumps until `done` holds for the events seen so far, for up to 10 s.
  bool WaitFor(const std::function<bool(const std::vector<bus::BusEvent>&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      std::vector<zmq::pollitem_t> items;
      for (zmq::socket_t* s : subscriber_.sockets())
        items.push_back({s->handle(), 0, ZMQ_POLLIN, 0});
      bus::Poll(items.data(), items.size(), 20ms);
      std::vector<bus::EventSubscriber::Update> updates;
      subscriber_.Receive(&updates);
      subscriber_.Tick(&updates);
      for (auto& u : updates) {
        if (u.kind == bus::EventSubscriber::Update::Kind::kEvent) events_.push_back(u.event);
      }
      if (done(events_)) return true;
    }
    return false;
  }
  static bool Has(const std::vector<bus::BusEvent>& events, const std::string& type) {
    for (const auto& e : events) {
      if (e.type == type) return true;
    }
    return false;
  }

 private:
  zmq::context_t context_;
  bus::EventSubscriber subscriber_;
  std::vector<bus::BusEvent> events_;
};

TEST_F(AgentControlTest, TheBusCarriesAgentTaskAndIdleEvents) {
  EventLog log(event_subscribe_, snapshot_);
  auto agent = StartAgent("agent-e", 1);
  WaitConnected("agent-e");
  EXPECT_TRUE(log.WaitFor([](const auto& events) {
    for (const auto& e : events) {
      auto idle = e.template Decode<bus::ClusterIdle>();
      if (idle.ok() && idle->agents.size() == 1 && idle->agents[0].agent_id == "agent-e") {
        return EventLog::Has(events, "agent.connected");
      }
    }
    return false;
  })) << "expected agent.connected and cluster.idle naming agent-e";

  const std::string id = Run("true");
  std::vector<std::string> states;
  EXPECT_TRUE(log.WaitFor([&](const auto& events) {
    states.clear();
    for (const auto& e : events) {
      auto state = e.template Decode<bus::TaskStateEvent>();
      if (state.ok() && state->task.id == id) states.push_back(state->task.state);
    }
    return !states.empty() && states.back() == "TERMINATED";
  })) << "expected task.state TERMINATED for "
      << id;
  EXPECT_EQ(states, (std::vector<std::string>{"QUEUED", "ASSIGNED", "PULLING", "STARTING",
                                              "RUNNING", "TERMINATED"}));

  Det("agent disable --drain agent-e");
  EXPECT_TRUE(
      log.WaitFor([](const auto& events) { return EventLog::Has(events, "agent.disabled"); }));
  agent->Stop(SIGKILL);
  EXPECT_TRUE(log.WaitFor([](const auto& events) { return EventLog::Has(events, "agent.lost"); }));
}

TEST_F(AgentControlTest, UtilizationSamplesReachTheAgentList) {
  setenv("DET_UTILIZATION_INTERVAL", "200ms", 1);
  auto agent = StartAgent("agent-u", 2);
  unsetenv("DET_UTILIZATION_INTERVAL");
  WaitConnected("agent-u");
  EXPECT_TRUE(WaitFor("--json agent list", "\"utilization\":[{\"slot_id\":\"cpu0\""))
      << Det("--json agent list");
}

}  // namespace
}  // namespace det

namespace det {
namespace {

TEST_F(AgentControlTest, AgentThatGivesUpRunsItsConnectionLostHookAndExits3) {
  const std::string marker = (dir_ / "hook-ran").string();
  std::ofstream(dir_ / "agent.yaml") << "master_host: 127.0.0.1\nmaster_port: 1\n"
                                     << "agent_reconnect_attempts: 1\n"
                                     << "agent_reconnect_backoff: 100ms\n"
                                     << "master_silence_limit: 500ms\n"
                                     << "artificial_slots: 1\n"
                                     << "security: {plaintext: true}\n"
                                     << "hooks:\n  on_connection_lost: [touch, " << marker << "]\n";
  testing::Process agent(
      {testing::BuildDir() + "/agent/det-agent", "-c", (dir_ / "agent.yaml").string(), "--agent-id",
       "agent-h", "--work-dir", (dir_ / "work-agent-h").string()},
      dir_ / "agent-h.log");
  ASSERT_TRUE(WaitForLog("agent-h.log", "gave up reconnecting")) << Log("agent-h.log");
  EXPECT_EQ(agent.Stop(), 3) << Log("agent-h.log");
  EXPECT_TRUE(std::filesystem::exists(marker)) << Log("agent-h.log");
}

}  // namespace
}  // namespace det
