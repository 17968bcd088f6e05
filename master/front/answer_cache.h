#pragma once

// Answers that clients poll (the agents, the resource pools, the job queue, the experiment list),
// kept already encoded as JSON and replaced when they may have changed: at once when an event says
// so (the registry publishes agent.*, task.state, cluster.*, pool.provider) and `max_age` after
// the last fetch otherwise (heartbeats and utilisation move without events). A request reads the
// encoded answer without a round trip to an actor; after a change, one request fetches it again
// while the others are given the previous answer (single flight).
//
// Desired state: each entry equal to what its fetch would answer now, within max_age. Actual
// state: the answer last fetched, its time, and the events seen since. When they differ (an event
// came, or the answer is older than max_age), the next Get() fetches.
//
// Events only matter while some entry holds an answer no event has made stale: otherwise (every
// entry stale, say, while tasks churn and nobody lists them; and the subscription in sync with the
// broker) the listener does not read them, so
// a stream of events costs no wakeups. They wait in the subscription (bounded by its high-water
// mark; one dropped there makes the subscriber resync, which makes everything stale) and are read
// once a Get() stores a fresh answer: those from before its fetch make it stale again at worst.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus/event_broker.h"
#include "common/clock.h"
#include "common/status.h"

namespace det::master {

class AnswerCache {
 public:
  using Json = std::shared_ptr<const std::string>;
  // The answer as the route sends it, asked of the actors. May block.
  using Fetch = std::function<Result<std::string>()>;

  AnswerCache(zmq::context_t& context, bus::EventBrokerEndpoints events, Duration max_age,
              const Clock& clock = RealClock::Instance());
  ~AnswerCache();  // Stop()s

  // Before Start(): entry `key`, answered by `fetch`, made stale by events whose type starts with
  // one of `prefixes`.
  void Add(const std::string& key, std::vector<std::string> prefixes, Fetch fetch);
  // Subscribes to the events (a thread of its own). Without it entries age by max_age alone.
  void Start();
  void Stop();

  // The answer: the cached one when fresh (or while another caller fetches a newer one), else
  // fetched now. NotFound for an unknown key; the fetch's error when there is nothing cached.
  // Thread-safe.
  Result<Json> Get(const std::string& key);
  // Whether the listener has subscribed and synced with the broker: an event published from now on
  // reaches it (for tests).
  bool following() const { return following_.load(); }
  // How often Get() had to fetch (for tests and the benchmark).
  int64_t fetches() const { return fetches_.load(); }
  // Events the listener has read (for tests).
  int64_t events_read() const { return events_read_.load(); }

 private:
  struct Entry {
    std::vector<std::string> prefixes;
    Fetch fetch;
    std::mutex mu;
    Json json;
    MonoTime fetched_at;
    uint64_t generation = 0;          // events seen
    uint64_t fetched_generation = 0;  // of the answer held
    bool fetching = false;
  };
  void Listen();
  void Touch(const std::string& type);  // an event of `type` came: its entries are stale
  bool AnyCurrent();                    // an entry holds an answer no event made stale
  // The listener, while no entry is current: until a Get() stores an answer (or a tenth of a
  // second, to see stop_).
  void WaitForCurrentAnswer();

  zmq::context_t& context_;
  const bus::EventBrokerEndpoints events_;
  const Duration max_age_;
  const Clock& clock_;                                     // the answers' age
  std::map<std::string, std::unique_ptr<Entry>> entries_;  // fixed after Start()
  std::atomic<int64_t> fetches_{0};
  std::atomic<int64_t> events_read_{0};
  std::atomic<bool> following_{false};
  std::atomic<bool> stop_{false};
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stored_ = false;  // a Get() stored an answer since the listener last waited
  std::thread listener_;
};

}  // namespace det::master
