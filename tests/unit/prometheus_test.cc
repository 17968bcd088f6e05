#include "master/front/prometheus.h"

#include <gtest/gtest.h>

namespace det::master {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(PrometheusTextTest, CountsAgentsSlotsJobsAndExperimentsByLabel) {
  MetricsSnapshot s;
  s.pools = {"default", "gpu"};
  bus::AgentSummary a;
  a.id = "a1";
  a.state = "connected";
  a.resource_pool = "default";
  a.slots.resize(4);
  a.used_slots = 1;
  a.disabled_slots = {"cpu3"};
  a.utilization = {{"cpu0", 55, 128}};
  bus::AgentSummary lost = a;
  lost.id = "a2";
  lost.state = "lost";
  bus::AgentSummary off = a;
  off.id = "a\"3";
  off.enabled = false;
  off.used_slots = 0;
  off.utilization = {};
  s.agents = {a, lost, off};
  s.jobs = {bus::JobSummary{.job_id = "j1", .state = "QUEUED", .resource_pool = "gpu"},
            bus::JobSummary{.job_id = "j2", .state = "SCHEDULED", .resource_pool = "default"}};
  s.experiments = {{.id = 1, .state = "COMPLETED"},
                   {.id = 2, .state = "COMPLETED"},
                   {.id = 3, .state = "ACTIVE"}};
  s.registry = {.scheduling_passes = 7,
                .scheduling_ns_total = 1'500'000'000,
                .last_pass_ns = 2000,
                .agent_messages = 40,
                .agent_drops = 1};
  s.bus = {.gateway_requests = 12, .gateway_drops = 2, .events_forwarded = 30, .events_dropped = 0};
  const std::string text = PrometheusText(s);

  EXPECT_TRUE(Has(text, "# TYPE det_agents gauge"));
  EXPECT_TRUE(Has(text, R"(det_agents{pool="default",state="connected"} 2)"));
  EXPECT_TRUE(Has(text, R"(det_agents{pool="default",state="lost"} 1)"));
  EXPECT_TRUE(Has(text, R"(det_agents{pool="gpu",state="connected"} 0)"));
  // a1: 1 used, 1 disabled, 2 free; a"3 (disabled agent): all 4 disabled; the lost one: none.
  EXPECT_TRUE(Has(text, R"(det_slots{pool="default",state="used"} 1)"));
  EXPECT_TRUE(Has(text, R"(det_slots{pool="default",state="disabled"} 5)"));
  EXPECT_TRUE(Has(text, R"(det_slots{pool="default",state="free"} 2)"));
  EXPECT_TRUE(Has(text, R"(det_slot_utilization_percent{agent="a1",slot="cpu0"} 55)"));
  EXPECT_TRUE(Has(text, R"(det_slot_memory_used_mib{agent="a1",slot="cpu0"} 128)"));
  EXPECT_TRUE(Has(text, R"(det_jobs{pool="gpu",state="QUEUED"} 1)"));
  EXPECT_TRUE(Has(text, R"(det_jobs{pool="default",state="QUEUED"} 0)"));
  EXPECT_TRUE(Has(text, R"(det_experiments{state="COMPLETED"} 2)"));
  EXPECT_TRUE(Has(text, "det_scheduling_passes_total 7"));
  EXPECT_TRUE(Has(text, "det_scheduling_pass_seconds_total 1.5"));
  EXPECT_TRUE(Has(text, "det_scheduling_last_pass_seconds 2e-06"));
  EXPECT_TRUE(Has(text, R"(det_bus_messages_total{endpoint="agents"} 40)"));
  EXPECT_TRUE(Has(text, R"(det_bus_dropped_total{endpoint="gateway"} 2)"));
  EXPECT_EQ(text.find("a\"3"), std::string::npos);  // label values are escaped
}

TEST(PrometheusTextTest, CountsTheAutoscalersInstancesAndDecisions) {
  MetricsSnapshot s;
  bus::InstanceInfo running{.id = "i-1", .resource_pool = "gpu", .state = "running"};
  bus::InstanceInfo booting{.id = "i-2", .resource_pool = "gpu", .state = "starting"};
  bus::InstanceInfo other = running;
  other.id = "i-3";
  s.instances = {running, booting, other};
  s.scaling_totals["gpu"] = {.decisions = 4, .launched = 5, .terminated = 2, .errors = 1};
  const std::string text = PrometheusText(s);
  EXPECT_TRUE(Has(text, R"(det_autoscaler_instances{pool="gpu",state="running"} 2)"));
  EXPECT_TRUE(Has(text, R"(det_autoscaler_instances{pool="gpu",state="starting"} 1)"));
  EXPECT_TRUE(Has(text, "# TYPE det_autoscaler_decisions_total counter"));
  EXPECT_TRUE(Has(text, R"(det_autoscaler_decisions_total{pool="gpu"} 4)"));
  EXPECT_TRUE(Has(text, R"(det_autoscaler_launched_total{pool="gpu"} 5)"));
  EXPECT_TRUE(Has(text, R"(det_autoscaler_terminated_total{pool="gpu"} 2)"));
  EXPECT_TRUE(Has(text, R"(det_autoscaler_decision_errors_total{pool="gpu"} 1)"));
}

}  // namespace
}  // namespace det::master
