#include "master/rendezvous.h"

namespace det::master {

Result<std::vector<RendezvousArrival>> Rendezvous::Arrive(const std::string& allocation_id,
                                                          int num_containers,
                                                          RendezvousArrival arrival) {
  if (num_containers < 1 || arrival.rank < 0 || arrival.rank >= num_containers) {
    return InvalidArgument("rank: " + std::to_string(arrival.rank) + " is not a container of " +
                           std::to_string(num_containers));
  }
  if (arrival.address.empty()) return InvalidArgument("address: is required");
  const auto now = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  Prune(now);
  auto [it, first] = meetings_.try_emplace(allocation_id);
  Meeting& meeting = it->second;
  if (first) {
    meeting.num_containers = num_containers;
    meeting.deadline = now + timeout_;
  } else if (meeting.num_containers != num_containers) {
    return InvalidArgument("num_containers: " + std::to_string(num_containers) +
                           ", but the allocation's first container said " +
                           std::to_string(meeting.num_containers));
  }
  const int rank = arrival.rank;
  if (meeting.failure.empty()) meeting.arrived[rank] = std::move(arrival);
  changed_.notify_all();
  changed_.wait_until(lock, meeting.deadline,
                      [&] { return meeting.complete() || !meeting.failure.empty(); });
  if (!meeting.complete() && meeting.failure.empty()) {
    meeting.failure = "rendezvous of allocation " + allocation_id + " timed out: container(s) " +
                      Missing(meeting) + " of " + std::to_string(num_containers) + " never arrived";
    lock.unlock();
    fail_allocation_(allocation_id, meeting.failure);  // the meeting outlives this: only pruned
    lock.lock();                                       // long after its deadline
    changed_.notify_all();
  }
  if (!meeting.failure.empty()) return FailedPrecondition(meeting.failure);
  std::vector<RendezvousArrival> all;
  for (const auto& [r, a] : meeting.arrived) all.push_back(a);
  return all;
}

void Rendezvous::Prune(std::chrono::steady_clock::time_point now) {
  std::erase_if(meetings_, [&](const auto& entry) {
    return entry.second.deadline + std::chrono::hours(1) < now;
  });
}

std::string Rendezvous::Missing(const Meeting& meeting) const {
  std::string missing;
  for (int rank = 0; rank < meeting.num_containers; ++rank) {
    if (meeting.arrived.count(rank)) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
  }
  return missing;
}

}  // namespace det::master
