#include "master/experiments/rendezvous.h"

namespace det::master {

void Rendezvous::Arrive(const std::string& allocation_id, int num_containers,
                        RendezvousArrival arrival, TimePoint now, Answer answer) {
  if (num_containers < 1 || arrival.rank < 0 || arrival.rank >= num_containers) {
    return answer(InvalidArgument("rank: " + std::to_string(arrival.rank) +
                                  " is not a container of " + std::to_string(num_containers)));
  }
  if (arrival.address.empty()) return answer(InvalidArgument("address: is required"));
  std::unique_lock lock(mu_);
  auto [it, first] = meetings_.try_emplace(allocation_id);
  Meeting& meeting = it->second;
  if (first) {
    meeting.num_containers = num_containers;
    meeting.deadline = now + timeout_;
  } else if (meeting.num_containers != num_containers) {
    lock.unlock();
    return answer(InvalidArgument("num_containers: " + std::to_string(num_containers) +
                                  ", but the allocation's first container said " +
                                  std::to_string(meeting.num_containers)));
  }
  if (!meeting.failure.empty()) {
    const std::string failure = meeting.failure;
    lock.unlock();
    return answer(FailedPrecondition(failure));
  }
  const int rank = arrival.rank;
  meeting.arrived[rank] = std::move(arrival);
  Answer replaced;
  if (auto earlier = meeting.waiting.find(rank); earlier != meeting.waiting.end()) {
    replaced = std::move(earlier->second);
  }
  meeting.waiting[rank] = std::move(answer);
  std::map<int, Answer> done;
  std::vector<RendezvousArrival> everyone;
  if (meeting.complete()) {
    done = std::move(meeting.waiting);
    meeting.waiting.clear();
    everyone = Everyone(meeting);
  }
  lock.unlock();
  if (replaced) replaced(FailedPrecondition("container arrived again: this call was replaced"));
  for (auto& [r, a] : done) a(everyone);
}

void Rendezvous::Tick(TimePoint now) {
  std::vector<std::pair<std::string, std::string>> failed;  // allocation, why
  std::vector<std::pair<Answer, std::string>> answers;
  {
    std::lock_guard lock(mu_);
    for (auto& [allocation_id, meeting] : meetings_) {
      if (meeting.complete() || !meeting.failure.empty() || now < meeting.deadline) continue;
      meeting.failure = "rendezvous of allocation " + allocation_id + " timed out: container(s) " +
                        Missing(meeting) + " of " + std::to_string(meeting.num_containers) +
                        " never arrived";
      failed.emplace_back(allocation_id, meeting.failure);
      for (auto& [rank, answer] : meeting.waiting) {
        answers.emplace_back(std::move(answer), meeting.failure);
      }
      meeting.waiting.clear();
    }
    // A container arriving an hour late is told it is over; after that the meeting is forgotten.
    std::erase_if(meetings_, [&](const auto& entry) {
      return entry.second.deadline + std::chrono::hours(1) < now;
    });
  }
  for (const auto& [allocation_id, why] : failed) fail_allocation_(allocation_id, why);
  for (auto& [answer, why] : answers) answer(FailedPrecondition(why));
}

std::vector<RendezvousArrival> Rendezvous::Everyone(const Meeting& meeting) {
  std::vector<RendezvousArrival> all;
  for (const auto& [rank, arrival] : meeting.arrived) all.push_back(arrival);
  return all;
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
