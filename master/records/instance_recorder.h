#pragma once

#include <atomic>
#include <thread>
#include <zmq.hpp>

#include "bus/catalog/autoscaler.h"
#include "bus/event_broker.h"
#include "bus/event_subscriber.h"
#include "common/clock.h"
#include "master/records/store.h"
#include "storage/cloud_repo.h"

namespace det::master {

// Stores what the autoscaler publishes on the event bus: its instances (`instance.state`, a
// tombstone when one is gone) and each scaling decision (`instance.decision`), so that
// `det autoscaler instances|decisions` and the REST API answer from PostgreSQL, also while the
// autoscaler is down.
//
// Threading: an actor. Start() runs it on its own thread (subscribed to the broker's in-process
// endpoints) until Stop(); writes go through the Store.
class InstanceRecorder {
 public:
  InstanceRecorder(zmq::context_t& context, const Clock& clock, Store& store,
                   bus::EventBrokerEndpoints broker);
  ~InstanceRecorder();
  void Start();
  void Stop();

 private:
  void Run();
  void Record(const bus::BusEvent& event);

  zmq::context_t& context_;
  const Clock& clock_;
  Store& store_;
  bus::EventBrokerEndpoints broker_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace det::master
