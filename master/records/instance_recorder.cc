#include "master/records/instance_recorder.h"

#include <spdlog/spdlog.h>

#include "bus/event_subscriber.h"
#include "bus/socket.h"
#include "common/thread_name.h"
#include "master/records/autoscaler_records.h"

namespace det::master {

InstanceRecorder::InstanceRecorder(zmq::context_t& context, const Clock& clock, Store& store,
                                   bus::EventBrokerEndpoints broker)
    : context_(context), clock_(clock), store_(store), broker_(std::move(broker)) {}

InstanceRecorder::~InstanceRecorder() { Stop(); }

void InstanceRecorder::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void InstanceRecorder::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void InstanceRecorder::Run() {
  NameThisThread("instances");
  bus::EventSubscriber subscriber(context_, "master-instances", broker_, {}, clock_, {"instance."});
  if (Status started = subscriber.Start(); !started.ok()) {
    spdlog::error("instance recorder: {}", started.message());
    return;
  }
  std::vector<bus::EventSubscriber::Update> updates;
  while (!stop_.load()) {
    std::vector<zmq::pollitem_t> items;
    for (zmq::socket_t* s : subscriber.sockets()) items.push_back({s->handle(), 0, ZMQ_POLLIN, 0});
    bus::Poll(items.data(), items.size(), std::chrono::milliseconds(100));
    updates.clear();
    subscriber.Receive(&updates);
    subscriber.Tick(&updates);
    for (const auto& update : updates) {
      if (update.kind == bus::EventSubscriber::Update::Kind::kEvent) Record(update.event);
    }
  }
}

void InstanceRecorder::Record(const bus::BusEvent& event) {
  if (event.type == bus::InstanceEvent::kType) {
    auto decoded = event.Decode<bus::InstanceEvent>();
    if (!decoded.ok()) {
      spdlog::warn("instance recorder: {}", decoded.status().message());
      return;
    }
    storage::InstanceRecord record = ToRecord(decoded->instance);
    if (event.header.tombstone) {
      record.state = "terminated";
      record.terminated_ns = UnixNanos(clock_.WallNow());
    }
    store_.Enqueue([record](pqxx::work& tx) { storage::UpsertInstance(tx, record); });
  } else if (event.type == bus::ScalingDecisionEvent::kType) {
    auto decoded = event.Decode<bus::ScalingDecisionEvent>();
    if (!decoded.ok()) {
      spdlog::warn("instance recorder: {}", decoded.status().message());
      return;
    }
    const storage::ScalingDecisionRecord record = ToRecord(*decoded);
    store_.Enqueue([record](pqxx::work& tx) { (void)storage::RecordScalingDecision(tx, record); });
  }
}

}  // namespace det::master
