#include "master/front/http/preemption_board.h"

#include <map>

#include "bus/rpc_client.h"
#include "master/experiments/experiments_endpoint.h"

namespace det::master::http {

PreemptionBoard::PreemptionBoard(zmq::context_t& context) : context_(context) {}

PreemptionBoard::~PreemptionBoard() = default;

void PreemptionBoard::Park(std::string allocation_id, TimePoint deadline, Answer answer) {
  std::lock_guard lock(mu_);
  waiters_.push_back({std::move(allocation_id), deadline, std::move(answer)});
}

size_t PreemptionBoard::waiting() const {
  std::lock_guard lock(mu_);
  return waiters_.size();
}

void PreemptionBoard::Tick(TimePoint now) {
  bus::TrialSignalsRequest request;
  {
    std::lock_guard lock(mu_);
    if (waiters_.empty()) return;
    std::map<std::string, bool> seen;
    for (const Waiter& waiter : waiters_) {
      if (!seen[waiter.allocation_id]) request.allocation_ids.push_back(waiter.allocation_id);
      seen[waiter.allocation_id] = true;
    }
  }
  if (!client_) {
    client_ = std::make_unique<bus::RpcClient>(
        context_, kExperimentsEndpoint, bus::SocketSecurity{},
        bus::RpcClientConfig{.timeout = std::chrono::seconds(5), .attempts = 1});
  }
  auto reply = client_->Call<bus::TrialSignalsRequest, bus::TrialSignals>(request);
  std::map<std::string, bus::AllocationSignal> signals;
  if (reply.ok()) {
    for (bus::AllocationSignal& signal : reply->signals) {
      signals[signal.allocation_id] = std::move(signal);
    }
  }
  std::vector<std::pair<Answer, Result<bus::TrialSignal>>> answers;
  {
    std::lock_guard lock(mu_);
    std::erase_if(waiters_, [&](Waiter& waiter) {
      auto signal = signals.find(waiter.allocation_id);
      if (signal != signals.end() && !signal->second.live) {
        answers.emplace_back(
            std::move(waiter.answer),
            NotFound("allocation " + waiter.allocation_id + " is not a live trial run"));
        return true;
      }
      if (signal != signals.end() && signal->second.signal.should_stop) {
        answers.emplace_back(std::move(waiter.answer), signal->second.signal);
        return true;
      }
      if (now < waiter.deadline) return false;
      bus::TrialSignal quiet;
      if (signal != signals.end()) quiet = signal->second.signal;
      answers.emplace_back(std::move(waiter.answer), quiet);
      return true;
    });
  }
  for (auto& [answer, result] : answers) answer(std::move(result));
}

}  // namespace det::master::http
