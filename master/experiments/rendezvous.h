#pragma once

#include <chrono>
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
// The first arrival starts a clock: if the others have not all arrived `timeout` later (seen by
// Tick), the rendezvous fails for every container (FailedPrecondition naming the ranks that never
// came), and `fail_allocation` is called once with why, so that the allocation ends rather than
// wait.
//
// Threading: thread-safe. No caller waits: an arrival's answer comes through its callback, from
// the thread of the arrival that completed the meeting or of the Tick that ended it (never with
// the lock held).
class Rendezvous {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using FailAllocation =
      std::function<void(const std::string& allocation_id, const std::string& why)>;
  // Every container's arrival, by rank, or why the rendezvous failed. Called once.
  using Answer = std::function<void(Result<std::vector<RendezvousArrival>>)>;

  Rendezvous(Duration timeout, FailAllocation fail_allocation)
      : timeout_(timeout), fail_allocation_(std::move(fail_allocation)) {}

  // Answers once all `num_containers` have arrived (at once for a meeting already complete or
  // failed, and for a bad arrival). A container that arrives again (a retried call) replaces its
  // earlier arrival, whose answer is then an error.
  void Arrive(const std::string& allocation_id, int num_containers, RendezvousArrival arrival,
              TimePoint now, Answer answer);
  // Fails the meetings whose time is up at `now` and forgets those that ended long ago.
  void Tick(TimePoint now);

 private:
  struct Meeting {
    int num_containers = 0;
    std::map<int, RendezvousArrival> arrived;
    std::map<int, Answer> waiting;  // by rank
    TimePoint deadline;
    std::string failure;  // set once it timed out
    bool complete() const { return static_cast<int>(arrived.size()) == num_containers; }
  };
  std::string Missing(const Meeting& meeting) const;
  static std::vector<RendezvousArrival> Everyone(const Meeting& meeting);

  const Duration timeout_;
  const FailAllocation fail_allocation_;
  std::mutex mu_;
  std::map<std::string, Meeting> meetings_;  // by allocation id
};

}  // namespace det::master
