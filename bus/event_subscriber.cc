#include "bus/event_subscriber.h"

#include <spdlog/spdlog.h>

#include "bus/agent_channel.h"

namespace det::bus {

EventSubscriber::EventSubscriber(zmq::context_t& context, std::string name,
                                 EventBrokerEndpoints endpoints, SocketSecurity security,
                                 const Clock& clock, std::vector<std::string> prefixes,
                                 EventSubscriberConfig config, SocketLimits limits)
    : context_(context),
      name_(std::move(name)),
      endpoints_(std::move(endpoints)),
      security_(std::move(security)),
      clock_(clock),
      prefixes_(std::move(prefixes)),
      config_(config),
      limits_(limits),
      drops_(name_ + " event subscriber", clock) {}

Status EventSubscriber::Start() {
  sub_ = std::make_unique<zmq::socket_t>(MakeSocket(context_, zmq::socket_type::sub, limits_));
  if (prefixes_.empty()) {
    sub_->set(zmq::sockopt::subscribe, "");
  } else {
    for (const auto& p : prefixes_) sub_->set(zmq::sockopt::subscribe, p);
    sub_->set(zmq::sockopt::subscribe, std::string(BrokerBeacon::kType));
  }
  DET_RETURN_IF_ERROR(Connect(*sub_, endpoints_.subscribe, security_));
  RequestSnapshot();
  return Status::Ok();
}

std::vector<zmq::socket_t*> EventSubscriber::sockets() {
  std::vector<zmq::socket_t*> out;
  if (sub_) out.push_back(sub_.get());
  if (snapshot_) out.push_back(snapshot_.get());
  return out;
}

void EventSubscriber::RequestSnapshot() {
  // A fresh socket per request, so a late reply to an abandoned request can never be mistaken
  // for the answer to this one.
  snapshot_ =
      std::make_unique<zmq::socket_t>(MakeSocket(context_, zmq::socket_type::dealer, limits_));
  syncing_ = true;
  buffered_.clear();
  requested_at_ = clock_.Now();
  Status connected = Connect(*snapshot_, endpoints_.snapshot, security_);
  if (!connected.ok()) {
    spdlog::error("{}: {}", name_, connected.message());
    return;
  }
  (void)Send(*snapshot_, {}, MakeHeader(name_, 0, 0, clock_), SnapshotRequest{prefixes_});
}

void EventSubscriber::Resync(const std::string& reason) {
  ++resyncs_;
  spdlog::info("{}: resyncing with the event broker: {}", name_, reason);
  RequestSnapshot();
}

void EventSubscriber::Receive(std::vector<Update>* updates) {
  ReceiveSnapshot(updates);
  while (sub_ && ReceiveFrames(*sub_, &frames_)) {
    auto envelope = ParseEnvelope(frames_, 0);
    if (!envelope.ok()) {
      drops_.Record("broker", envelope.status());
      continue;
    }
    BusEvent event{std::move(envelope->type), std::move(envelope->header),
                   std::string(envelope->body_bytes())};
    if (syncing_) {
      if (buffered_.size() >= kMaxBuffered) {
        Resync("too many events while waiting for the snapshot");
        continue;
      }
      buffered_.push_back(std::move(event));
      continue;
    }
    (void)Apply(std::move(event), updates);
  }
}

void EventSubscriber::ReceiveSnapshot(std::vector<Update>* updates) {
  while (snapshot_ && ReceiveFrames(*snapshot_, &frames_)) {
    auto envelope = ParseEnvelope(frames_, 0);
    if (!envelope.ok()) {
      drops_.Record("snapshot service", envelope.status());
      continue;
    }
    auto reply = envelope->Decode<SnapshotReply>();
    if (!reply.ok()) {
      drops_.Record("snapshot service", reply.status());
      continue;
    }
    snapshot_.reset();
    LoadSnapshot(*reply, updates);
    return;
  }
}

void EventSubscriber::LoadSnapshot(const SnapshotReply& reply, std::vector<Update>* updates) {
  broker_epoch_ = reply.broker_epoch;
  applied_.clear();
  for (const auto& p : reply.positions) applied_[{p.sender, p.epoch, p.type}] = p.seq;
  updates->push_back({Update::Kind::kReset, {}});
  for (const auto& retained : reply.events) {
    updates->push_back(
        {Update::Kind::kEvent, {retained.type, retained.header, retained.body.data}});
  }
  syncing_ = false;
  last_beacon_ = clock_.Now();
  std::vector<BusEvent> pending = std::move(buffered_);
  buffered_.clear();
  for (auto& event : pending) {
    if (!Apply(std::move(event), updates)) return;
  }
}

bool EventSubscriber::Apply(BusEvent event, std::vector<Update>* updates) {
  const Header& h = event.header;
  if (event.type == BrokerBeacon::kType) {
    if (h.epoch != broker_epoch_) {
      Resync("the event broker restarted");
      return false;
    }
    last_beacon_ = clock_.Now();
    return true;
  }
  StreamKey key{h.sender, h.epoch, event.type};
  auto it = applied_.find(key);
  const uint64_t last = it == applied_.end() ? 0 : it->second;
  if (h.seq <= last) return true;  // the snapshot already reflects it
  if (h.seq != last + 1) {
    Resync("gap in " + event.type + " from " + h.sender + ": expected " + std::to_string(last + 1) +
           ", got " + std::to_string(h.seq));
    return false;
  }
  applied_[key] = h.seq;
  updates->push_back({Update::Kind::kEvent, std::move(event)});
  return true;
}

void EventSubscriber::Tick(std::vector<Update>* updates) {
  const MonoTime now = clock_.Now();
  if (syncing_ && now - requested_at_ >= config_.snapshot_timeout) {
    Resync("no snapshot reply within " +
           std::to_string(
               std::chrono::duration_cast<std::chrono::milliseconds>(config_.snapshot_timeout)
                   .count()) +
           " ms");
  } else if (!syncing_ && now - last_beacon_ >= config_.broker_silence) {
    Resync("no beacon from the event broker");
  }
}

}  // namespace det::bus
