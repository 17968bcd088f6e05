#pragma once

// The trial runs' preemption long polls (GET /api/v1/allocations/{id}/signals/preemption),
// parked: each waits for its run's stop signal, or for its timeout, without a thread. Tick() asks
// the experiment service for the signals of every waiting allocation in one call and answers
// those told to stop, those that are no longer live runs, and those whose time is up, so the cost
// of a tick does not grow with a call per waiter.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "bus/catalog/experiments.h"
#include "common/status.h"

namespace det::bus {
class RpcClient;
}

namespace det::master::http {

class PreemptionBoard {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // The run's signal (should_stop false at the timeout), or NotFound for a run that is not live.
  // Called once.
  using Answer = std::function<void(Result<bus::TrialSignal>)>;

  explicit PreemptionBoard(zmq::context_t& context);
  ~PreemptionBoard();

  // Waits for allocation `allocation_id`'s stop signal until `deadline`. Thread-safe.
  void Park(std::string allocation_id, TimePoint deadline, Answer answer);
  // One round: one call to the experiment service for every waiting allocation; answers what it
  // can. Call from one thread (the wing's housekeeping); does nothing without waiters.
  void Tick(TimePoint now);
  size_t waiting() const;

 private:
  struct Waiter {
    std::string allocation_id;
    TimePoint deadline;
    Answer answer;
  };

  zmq::context_t& context_;
  std::unique_ptr<bus::RpcClient> client_;  // Tick's thread only
  mutable std::mutex mu_;
  std::vector<Waiter> waiters_;
};

}  // namespace det::master::http
