#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace det::master {

// One container of a multi-container allocation, as it arrives at the rendezvous.
struct RendezvousArrival {
  int rank = 0;         // DET_CONTAINER_RANK: its resources' place in the allocation; 0 is chief
  std::string address;  // where the other containers reach it
  int port = 0;         // the chief's: the port it listens on for the others (gloo); else 0
  int slots = 0;        // slots this container has
};

// The rendezvous the master serves to distributed trials: every container of an allocation
// arrives with its rank and address, and each learns them all once the last has arrived.
//
// The first arrival starts a clock: if the others have not all arrived `timeout` later, the
// rendezvous fails for every container (FailedPrecondition naming the ranks that never came), and
// `fail_allocation` is called once with why, so that the allocation ends rather than wait.
//
// Threading: thread-safe; Arrive() blocks its caller (an HTTP worker) until the end.
class Rendezvous {
 public:
  using FailAllocation =
      std::function<void(const std::string& allocation_id, const std::string& why)>;
  Rendezvous(Duration timeout, FailAllocation fail_allocation)
      : timeout_(timeout), fail_allocation_(std::move(fail_allocation)) {}

  // Every container's arrival, by rank, once all `num_containers` have arrived. A container that
  // arrives again (a retried call) replaces its earlier arrival.
  Result<std::vector<RendezvousArrival>> Arrive(const std::string& allocation_id,
                                                int num_containers, RendezvousArrival arrival);

 private:
  struct Meeting {
    int num_containers = 0;
    std::map<int, RendezvousArrival> arrived;
    std::chrono::steady_clock::time_point deadline;
    std::string failure;  // set once it timed out
    bool complete() const { return static_cast<int>(arrived.size()) == num_containers; }
  };
  // Forgets meetings that ended long ago (a container arriving that late is told it is over).
  void Prune(std::chrono::steady_clock::time_point now);
  std::string Missing(const Meeting& meeting) const;

  const Duration timeout_;
  const FailAllocation fail_allocation_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Meeting> meetings_;  // by allocation id
};

}  // namespace det::master
