#include "master/front/prometheus.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace det::master {
namespace {

// A label value with \, " and newlines escaped.
std::string Escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

// One metric family: its help and type lines, then one sample per label set.
class Family {
 public:
  Family(std::ostringstream& out, const std::string& name, const std::string& type,
         const std::string& help)
      : out_(out), name_(name) {
    out_ << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  }
  void Sample(const Labels& labels, double value) {
    out_ << name_;
    if (!labels.empty()) {
      out_ << "{";
      for (size_t i = 0; i < labels.size(); ++i) {
        out_ << (i ? "," : "") << labels[i].first << "=\"" << Escape(labels[i].second) << "\"";
      }
      out_ << "}";
    }
    out_ << " " << value << "\n";
  }

 private:
  std::ostringstream& out_;
  std::string name_;
};

void Agents(std::ostringstream& out, const MetricsSnapshot& s) {
  std::map<std::pair<std::string, std::string>, int> agents;  // pool, state
  std::map<std::pair<std::string, std::string>, int> slots;
  for (const std::string& pool : s.pools) {
    agents[{pool, "connected"}] = 0;
    for (const char* state : {"free", "used", "disabled"}) slots[{pool, state}] = 0;
  }
  for (const auto& a : s.agents) {
    ++agents[{a.resource_pool, a.state}];
    if (a.state != "connected") continue;
    const int total = static_cast<int>(a.slots.size());
    const int disabled = a.enabled ? static_cast<int>(a.disabled_slots.size()) : total;
    slots[{a.resource_pool, "used"}] += a.used_slots;
    slots[{a.resource_pool, "disabled"}] += disabled;
    slots[{a.resource_pool, "free"}] += std::max(0, total - a.used_slots - disabled);
  }
  Family agent_family(out, "det_agents", "gauge", "Agents by resource pool and state.");
  for (const auto& [key, n] : agents)
    agent_family.Sample({{"pool", key.first}, {"state", key.second}}, n);
  Family slot_family(
      out, "det_slots", "gauge",
      "Slots of connected agents by resource pool and state (free, used, disabled).");
  for (const auto& [key, n] : slots)
    slot_family.Sample({{"pool", key.first}, {"state", key.second}}, n);
  Family util(out, "det_slot_utilization_percent", "gauge",
              "Each slot's utilisation as its agent last reported it.");
  Family memory(out, "det_slot_memory_used_mib", "gauge",
                "Each slot's device memory in use as its agent last reported it.");
  for (const auto& a : s.agents) {
    for (const auto& u : a.utilization) {
      util.Sample({{"agent", a.id}, {"slot", u.slot_id}}, u.utilization_percent);
      memory.Sample({{"agent", a.id}, {"slot", u.slot_id}}, static_cast<double>(u.memory_used_mib));
    }
  }
}

void Jobs(std::ostringstream& out, const MetricsSnapshot& s) {
  std::map<std::pair<std::string, std::string>, int> jobs;
  for (const std::string& pool : s.pools) {
    for (const char* state : {"QUEUED", "SCHEDULED", "SCHEDULED_BACKFILLED"})
      jobs[{pool, state}] = 0;
  }
  for (const auto& j : s.jobs) ++jobs[{j.resource_pool, j.state}];
  Family family(out, "det_jobs", "gauge", "Unfinished jobs by resource pool and queue state.");
  for (const auto& [key, n] : jobs) family.Sample({{"pool", key.first}, {"state", key.second}}, n);

  std::map<std::string, int> experiments;
  for (const auto& e : s.experiments) ++experiments[e.state];
  Family experiment_family(out, "det_experiments", "gauge", "Experiments by state.");
  for (const auto& [state, n] : experiments) experiment_family.Sample({{"state", state}}, n);
}

void Counters(std::ostringstream& out, const MetricsSnapshot& s) {
  Family passes(out, "det_scheduling_passes_total", "counter",
                "Scheduling passes run (one per burst of changes).");
  passes.Sample({}, static_cast<double>(s.registry.scheduling_passes));
  Family seconds(out, "det_scheduling_pass_seconds_total", "counter",
                 "Time spent in scheduling passes.");
  seconds.Sample({}, static_cast<double>(s.registry.scheduling_ns_total) / 1e9);
  Family last(out, "det_scheduling_last_pass_seconds", "gauge", "The latest pass's time.");
  last.Sample({}, static_cast<double>(s.registry.last_pass_ns) / 1e9);
  Family messages(out, "det_bus_messages_total", "counter",
                  "Messages handled per bus endpoint: gateway requests, agent messages, events.");
  messages.Sample({{"endpoint", "gateway"}}, static_cast<double>(s.bus.gateway_requests));
  messages.Sample({{"endpoint", "agents"}}, static_cast<double>(s.registry.agent_messages));
  messages.Sample({{"endpoint", "events"}}, static_cast<double>(s.bus.events_forwarded));
  Family drops(out, "det_bus_dropped_total", "counter",
               "Malformed messages dropped per bus endpoint.");
  drops.Sample({{"endpoint", "gateway"}}, static_cast<double>(s.bus.gateway_drops));
  drops.Sample({{"endpoint", "agents"}}, static_cast<double>(s.registry.agent_drops));
  drops.Sample({{"endpoint", "events"}}, static_cast<double>(s.bus.events_dropped));
}

void Autoscaler(std::ostringstream& out, const MetricsSnapshot& s) {
  std::map<std::pair<std::string, std::string>, int> instances;
  for (const auto& i : s.instances) ++instances[{i.resource_pool, i.state}];
  Family family(out, "det_autoscaler_instances", "gauge",
                "Instances the autoscaler manages, by resource pool and state.");
  for (const auto& [key, n] : instances)
    family.Sample({{"pool", key.first}, {"state", key.second}}, n);
  Family decisions(out, "det_autoscaler_decisions_total", "counter",
                   "Scaling decisions carried out (or refused, with an error), per pool.");
  Family launched(out, "det_autoscaler_launched_total", "counter", "Instances launched.");
  Family terminated(out, "det_autoscaler_terminated_total", "counter", "Instances terminated.");
  Family errors(out, "det_autoscaler_decision_errors_total", "counter",
                "Decisions that carried an error (provider errors, backoff, rate limit, breaker).");
  for (const auto& [pool, t] : s.scaling_totals) {
    decisions.Sample({{"pool", pool}}, static_cast<double>(t.decisions));
    launched.Sample({{"pool", pool}}, static_cast<double>(t.launched));
    terminated.Sample({{"pool", pool}}, static_cast<double>(t.terminated));
    errors.Sample({{"pool", pool}}, static_cast<double>(t.errors));
  }
}

}  // namespace

std::string PrometheusText(const MetricsSnapshot& snapshot) {
  std::ostringstream out;
  out.precision(15);
  Agents(out, snapshot);
  Jobs(out, snapshot);
  Autoscaler(out, snapshot);
  Counters(out, snapshot);
  return out.str();
}

}  // namespace det::master
