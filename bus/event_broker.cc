#include "bus/event_broker.h"

#include <spdlog/spdlog.h>

#include "bus/agent_channel.h"
#include "common/thread_name.h"

namespace det::bus {
namespace {

bool MatchesAny(const std::string& type, const std::vector<std::string>& prefixes) {
  if (prefixes.empty()) return true;
  for (const auto& p : prefixes) {
    if (type.starts_with(p)) return true;
  }
  return false;
}

}  // namespace

EventBroker::EventBroker(zmq::context_t& context, const Clock& clock, SocketLimits limits,
                         Duration beacon_interval)
    : clock_(clock),
      beacon_interval_(beacon_interval),
      epoch_(NewEpoch()),
      xsub_(MakeSocket(context, zmq::socket_type::xsub, limits)),
      xpub_(MakeSocket(context, zmq::socket_type::xpub, limits)),
      snapshot_(MakeSocket(context, zmq::socket_type::router, limits)),
      drops_("event broker", clock) {}

EventBroker::~EventBroker() { Stop(); }

Result<EventBrokerEndpoints> EventBroker::Bind(const EventBrokerEndpoints& endpoints,
                                               const SocketSecurity& security) {
  EventBrokerEndpoints bound;
  DET_ASSIGN_OR_RETURN(bound.publish, bus::Bind(xsub_, endpoints.publish, security));
  DET_ASSIGN_OR_RETURN(bound.subscribe, bus::Bind(xpub_, endpoints.subscribe, security));
  DET_ASSIGN_OR_RETURN(bound.snapshot, bus::Bind(snapshot_, endpoints.snapshot, security));
  SubscribeToEverything();
  return bound;
}

void EventBroker::SubscribeToEverything() {
  if (subscribed_) return;
  // The broker keeps the state of every stream, so it takes everything from every publisher
  // (publishers hold events back until they see this subscription: no slow-joiner loss). One
  // subscription covers the publishers of every endpoint, those that connect later too.
  const char subscribe_all = 1;
  xsub_.send(zmq::const_buffer(&subscribe_all, 1), zmq::send_flags::none);
  subscribed_ = true;
}

Result<EventBrokerEndpoints> EventBroker::BindLocal(const EventBrokerEndpoints& endpoints) {
  EventBrokerEndpoints bound;
  DET_ASSIGN_OR_RETURN(bound.publish, bus::Bind(xsub_, endpoints.publish, {}));
  DET_ASSIGN_OR_RETURN(bound.subscribe, bus::Bind(xpub_, endpoints.subscribe, {}));
  DET_ASSIGN_OR_RETURN(bound.snapshot, bus::Bind(snapshot_, endpoints.snapshot, {}));
  SubscribeToEverything();  // a broker with local endpoints only takes events too
  return bound;
}

void EventBroker::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void EventBroker::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void EventBroker::Run() {
  NameThisThread("event-broker");
  zmq::pollitem_t items[] = {{xsub_.handle(), 0, ZMQ_POLLIN, 0},
                             {xpub_.handle(), 0, ZMQ_POLLIN, 0},
                             {snapshot_.handle(), 0, ZMQ_POLLIN, 0}};
  while (!stop_) {
    Poll(items, 3, std::chrono::milliseconds(50));
    if (items[0].revents & ZMQ_POLLIN) ForwardEvents();
    if (items[1].revents & ZMQ_POLLIN) DrainSubscriptions();
    if (items[2].revents & ZMQ_POLLIN) AnswerSnapshots();
    if (clock_.Now() - last_beacon_ >= beacon_interval_) SendBeacon();
  }
}

void EventBroker::ForwardEvents() {
  // Bounded per wakeup so snapshot requests are not starved by a busy stream.
  for (int i = 0; i < 1000 && ReceiveFrames(xsub_, &frames_); ++i) {
    auto event = ParseEnvelope(frames_, 0);
    if (!event.ok()) {
      drops_.Record("a publisher", event.status());  // XSUB carries no peer id
      continue;
    }
    Record(*event);
    xpub_.send(zmq::buffer(event->type), zmq::send_flags::sndmore);
    xpub_.send(frames_[1], zmq::send_flags::sndmore);
    xpub_.send(event->body, zmq::send_flags::none);
    forwarded_++;
  }
}

void EventBroker::Record(const Envelope& event) {
  const Header& h = event.header;
  auto [epoch_it, inserted] = latest_epoch_.try_emplace(h.sender, h.epoch);
  if (!inserted && epoch_it->second != h.epoch) {
    // The publisher restarted: forget the positions of its previous incarnation.
    std::erase_if(positions_, [&](const auto& entry) {
      return std::get<0>(entry.first) == h.sender && std::get<1>(entry.first) != h.epoch;
    });
    epoch_it->second = h.epoch;
  }
  positions_[{h.sender, h.epoch, event.type}] = h.seq;
  if (h.key.empty()) return;
  if (h.tombstone) {
    retained_.erase(h.key);
  } else {
    retained_[h.key] = RetainedEvent{event.type, h, Bytes{std::string(event.body_bytes())}};
  }
}

void EventBroker::DrainSubscriptions() {
  // Subscribers' (un)subscriptions: the broker already takes everything, so they are only read.
  zmq::message_t message;
  while (xpub_.recv(message, zmq::recv_flags::dontwait)) {
  }
}

void EventBroker::AnswerSnapshots() {
  while (ReceiveFrames(snapshot_, &frames_)) {
    const std::string identity = frames_[0].to_string();
    auto envelope = ParseEnvelope(frames_, 1);
    if (!envelope.ok()) {
      drops_.Record(identity, envelope.status());
      continue;
    }
    auto request = envelope->Decode<SnapshotRequest>();
    if (!request.ok()) {
      drops_.Record(identity, request.status());
      continue;
    }
    (void)Send(snapshot_, {identity}, MakeHeader("broker", epoch_, 0, clock_),
               BuildSnapshot(request->prefixes));
  }
}

SnapshotReply EventBroker::BuildSnapshot(const std::vector<std::string>& prefixes) const {
  SnapshotReply reply;
  reply.broker_epoch = epoch_;
  for (const auto& [key, event] : retained_) {
    if (MatchesAny(event.type, prefixes)) reply.events.push_back(event);
  }
  for (const auto& [stream, seq] : positions_) {
    const auto& [sender, epoch, type] = stream;
    if (MatchesAny(type, prefixes)) reply.positions.push_back({sender, epoch, type, seq});
  }
  return reply;
}

void EventBroker::SendBeacon() {
  last_beacon_ = clock_.Now();
  Header header = MakeHeader("broker", epoch_, ++beacon_seq_, clock_);
  (void)Send(xpub_, {}, header, BrokerBeacon{});
}

}  // namespace det::bus
