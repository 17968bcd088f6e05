#include "bus/agent_channel_client.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "bus/catalog/channel.h"

namespace det::bus {

AgentChannelClient::AgentChannelClient(zmq::context_t& context, std::string agent_id,
                                       std::string endpoint, SocketSecurity security,
                                       const Clock& clock, AgentChannelConfig config,
                                       BackoffPolicy backoff, int max_attempts, SocketLimits limits)
    : context_(context),
      agent_id_(std::move(agent_id)),
      endpoint_(std::move(endpoint)),
      security_(std::move(security)),
      clock_(clock),
      config_(config),
      backoff_(backoff),
      max_attempts_(max_attempts),
      limits_(limits),
      epoch_(NewEpoch()),
      drops_("agent " + agent_id_ + " channel", clock) {}

Status AgentChannelClient::Start() { return OpenAndHello(); }

Status AgentChannelClient::OpenAndHello() {
  socket_ =
      std::make_unique<zmq::socket_t>(MakeSocket(context_, zmq::socket_type::dealer, limits_));
  socket_->set(zmq::sockopt::routing_id, agent_id_);
  DET_RETURN_IF_ERROR(Connect(*socket_, endpoint_, security_));
  state_ = State::kJoining;
  joining_since_ = clock_.Now();
  return Send(ChannelHello::kType, 0, Encode(ChannelHello{agent_id_}));
}

void AgentChannelClient::Disconnect(std::vector<Event>* events) {
  socket_.reset();
  acks_owed_.clear();  // the master resends what it has no acknowledgement for
  ++failed_joins_;
  if (max_attempts_ > 0 && failed_joins_ > max_attempts_) {
    state_ = State::kGaveUp;
    events->push_back({Event::Kind::kGaveUp});
    return;
  }
  state_ = State::kWaitingToReconnect;
  reconnect_at_ = clock_.Now() + backoff_.Next();
}

void AgentChannelClient::Receive(std::vector<Event>* events) {
  while (socket_ && ReceiveFrames(*socket_, &frames_)) {
    auto envelope = ParseEnvelope(frames_, 0);
    if (!envelope.ok()) {
      drops_.Record("master", envelope.status());
      continue;
    }
    last_heard_ = clock_.Now();
    Handle(std::move(*envelope), events);
  }
}

void AgentChannelClient::Handle(Envelope envelope, std::vector<Event>* events) {
  if (envelope.is(ChannelWelcome::kType)) return HandleWelcome(envelope, events);
  if (envelope.is(ChannelRejoin::kType)) {
    // The master has no session for us (it restarted, or let ours expire). Until its welcome
    // nothing else goes out: a message sent now would reach it right after the hello, ahead of
    // what the owner re-sends on learning of the restart (log batches would land out of order).
    if (state_ != State::kConnected) return;  // a hello is already on its way
    state_ = State::kJoining;
    joining_since_ = clock_.Now();
    (void)Send(ChannelHello::kType, 0, Encode(ChannelHello{agent_id_}));
    return;
  }
  if (state_ != State::kConnected) return;  // nothing but a welcome counts before one
  if (envelope.is(ChannelHeartbeat::kType)) return;
  if (envelope.is(ChannelAck::kType)) {
    auto ack = envelope.Decode<ChannelAck>();
    if (!ack.ok()) return drops_.Record("master", ack.status());
    for (uint64_t seq : ack->seqs) outbox_.Ack(seq);
    return;
  }
  if (envelope.header.seq != 0) {
    acks_owed_.push_back(envelope.header.seq);
    if (acks_owed_.size() >= kMaxAcksOwed) FlushAcks();
    if (!inbound_.Accept(envelope.header.epoch, envelope.header.seq)) return;
  }
  events->push_back({Event::Kind::kMessage, false, std::move(envelope)});
}

void AgentChannelClient::HandleWelcome(const Envelope& envelope, std::vector<Event>* events) {
  const bool restarted = master_epoch_.has_value() && *master_epoch_ != envelope.header.epoch;
  if (state_ == State::kConnected && !restarted) return;  // a duplicate welcome
  if (state_ != State::kConnected && master_epoch_.has_value()) ++reconnects_;
  master_epoch_ = envelope.header.epoch;
  state_ = State::kConnected;
  failed_joins_ = 0;
  backoff_.Reset();
  events->push_back({Event::Kind::kConnected, restarted});
  if (restarted) {
    for (const std::string& type : owner_resends_) outbox_.DropType(type);
  }
  Replay(/*only_due=*/false);
}

void AgentChannelClient::Tick(std::vector<Event>* events) {
  FlushAcks();
  const MonoTime now = clock_.Now();
  switch (state_) {
    case State::kGaveUp:
      return;
    case State::kWaitingToReconnect:
      if (now >= reconnect_at_) {
        Status opened = OpenAndHello();
        if (!opened.ok()) {
          spdlog::warn("agent channel: {}", opened.message());
          Disconnect(events);
        }
      }
      return;
    case State::kJoining:
      if (now - joining_since_ >= config_.silence_limit) Disconnect(events);
      return;
    case State::kConnected:
      if (now - last_heard_ >= config_.silence_limit) {
        spdlog::warn(
            "agent channel: master at {} silent for {} ms; reconnecting", endpoint_,
            std::chrono::duration_cast<std::chrono::milliseconds>(now - last_heard_).count());
        events->push_back({Event::Kind::kDisconnected});
        Disconnect(events);
        return;
      }
      if (now - last_sent_ >= config_.heartbeat_interval) {
        (void)Send(ChannelHeartbeat::kType, 0, Encode(ChannelHeartbeat{}));
      }
      Replay(/*only_due=*/true);
      return;
  }
}

MonoTime AgentChannelClient::NextWakeup() const {
  switch (state_) {
    case State::kWaitingToReconnect:
      return reconnect_at_;
    case State::kJoining:
      return joining_since_ + config_.silence_limit;
    case State::kConnected:
      return std::min(last_sent_ + config_.heartbeat_interval, last_heard_ + config_.silence_limit);
    case State::kGaveUp:
      break;
  }
  return clock_.Now() + std::chrono::hours(1);
}

void AgentChannelClient::QueueReliable(std::string type, std::string body) {
  Outbox::Pending& pending = outbox_.Add(std::move(type), std::move(body));
  if (state_ != State::kConnected) return;  // replayed after the next welcome
  if (Send(pending.type, pending.seq, pending.body).ok()) {
    outbox_.MarkSent(pending.seq, clock_.Now());
  }
}

void AgentChannelClient::Replay(bool only_due) {
  const MonoTime now = clock_.Now();
  auto pending = only_due ? outbox_.Due(now, config_.resend_after) : outbox_.All();
  for (Outbox::Pending* p : pending) {
    if (!Send(p->type, p->seq, p->body).ok()) break;
    outbox_.MarkSent(p->seq, now);
  }
}

Status AgentChannelClient::Send(std::string_view type, uint64_t seq, std::string_view body) {
  if (!socket_) return Unavailable("not connected to the master");
  if (type != ChannelAck::kType) FlushAcks();  // ahead of it, in the same burst
  last_sent_ = clock_.Now();
  return SendEnvelope(*socket_, {}, type, MakeHeader(agent_id_, epoch_, seq, clock_), body);
}

void AgentChannelClient::FlushAcks() {
  if (acks_owed_.empty() || state_ != State::kConnected) return;
  (void)Send(ChannelAck::kType, 0, Encode(ChannelAck{std::exchange(acks_owed_, {})}));
}

}  // namespace det::bus
