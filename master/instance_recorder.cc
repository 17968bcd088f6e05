#include "master/instance_recorder.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "bus/event_subscriber.h"
#include "bus/socket.h"

namespace det::master {
namespace {

using nlohmann::json;

std::vector<std::string> Strings(const std::string& text) {
  auto parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> out;
  if (!parsed.is_array()) return out;
  for (const auto& item : parsed) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

storage::InstanceRecord ToRecord(const bus::InstanceInfo& i) {
  storage::InstanceRecord record{i.id,         i.provider, i.resource_pool, i.instance_type,
                                 i.spot,       i.state,    std::nullopt,    i.launched_at,
                                 std::nullopt, i.zone,     i.agent};
  if (!i.agent.empty()) record.agent_id = i.id;
  if (i.terminated_at != 0) record.terminated_ns = i.terminated_at;
  return record;
}

bus::InstanceInfo FromRecord(const storage::InstanceRecord& r) {
  return {r.id,   r.resource_pool, r.provider,    r.instance_type, r.zone,
          r.spot, r.state,         r.agent_state, r.launched_ns,   r.terminated_ns.value_or(0)};
}

storage::ScalingDecisionRecord ToRecord(const bus::ScalingDecisionEvent& d) {
  json terminate = json::array();
  for (const auto& t : d.terminated) terminate.push_back({{"id", t.id}, {"reason", t.reason}});
  json reasons = json::array();
  if (!d.launch_reason.empty()) reasons.push_back(d.launch_reason);
  return {0,
          d.resource_pool,
          d.decided_at,
          d.launch,
          terminate.dump(),
          reasons.dump(),
          json(d.launched).dump(),
          d.error};
}

bus::ScalingDecisionEvent FromRecord(const storage::ScalingDecisionRecord& r) {
  bus::ScalingDecisionEvent d;
  d.resource_pool = r.resource_pool;
  d.decided_at = r.decided_ns;
  d.launch = r.launch;
  d.launched = Strings(r.launched_json);
  const std::vector<std::string> reasons = Strings(r.reasons_json);
  if (!reasons.empty()) d.launch_reason = reasons.front();
  auto terminate = json::parse(r.terminate_json, nullptr, false);
  if (terminate.is_array()) {
    for (const auto& t : terminate) {
      if (t.is_object()) d.terminated.push_back({t.value("id", ""), t.value("reason", "")});
    }
  }
  d.error = r.error;
  return d;
}

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
