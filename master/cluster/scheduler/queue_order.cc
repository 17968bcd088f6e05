#include "master/cluster/scheduler/queue_order.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace det::master::scheduler {
namespace {

std::vector<size_t> Pending(const PoolView& pool, bool aux) {
  std::vector<size_t> order;
  for (size_t i = 0; i < pool.requests.size(); ++i) {
    const RequestView& request = pool.requests[i];
    if (request.pending() && (request.slots == 0) == aux) order.push_back(i);
  }
  auto key = [&](size_t i) {
    const RequestView& request = pool.requests[i];
    const JobView& job = pool.jobs[request.job];
    return std::tuple(job.priority, job.position, request.submitted_ns, i);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  return order;
}

}  // namespace

std::vector<size_t> PendingSlotRequests(const PoolView& pool) { return Pending(pool, false); }

void PlaceAuxRequests(const PoolView& pool, Decisions* decisions) {
  std::set<std::pair<int32_t, size_t>> load;  // (aux tasks, agent) of agents with room
  for (size_t i = 0; i < pool.agents.size(); ++i) {
    const AgentView& agent = pool.agents[i];
    if (agent.schedulable && agent.aux < pool.max_aux_per_agent) load.emplace(agent.aux, i);
  }
  for (size_t request : Pending(pool, true)) {
    if (load.empty()) return;
    auto [aux, agent] = *load.begin();
    load.erase(load.begin());
    decisions->placements.push_back({request, {{agent, 0}}, false});
    if (aux + 1 < pool.max_aux_per_agent) load.emplace(aux + 1, agent);
  }
}

}  // namespace det::master::scheduler
