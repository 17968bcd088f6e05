#include "bus/agent_channel_server.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "bus/catalog/channel.h"

namespace det::bus {

AgentChannelServer::AgentChannelServer(zmq::context_t& context, std::string name,
                                       const Clock& clock, AgentChannelConfig config,
                                       SocketLimits limits)
    : socket_(MakeSocket(context, zmq::socket_type::router, limits)),
      name_(std::move(name)),
      clock_(clock),
      config_(config),
      epoch_(NewEpoch()),
      drops_(name_ + " agent channel", clock) {
  // A reconnecting agent (new socket, same identity) takes over its old connection.
  socket_.set(zmq::sockopt::router_handover, 1);
  // Sends to an unknown identity fail instead of vanishing, so the outbox keeps them.
  socket_.set(zmq::sockopt::router_mandatory, 1);
}

Result<std::string> AgentChannelServer::Bind(const std::string& endpoint,
                                             const SocketSecurity& security) {
  return bus::Bind(socket_, endpoint, security);
}

void AgentChannelServer::Receive(std::vector<Event>* events) {
  while (ReceiveFrames(socket_, &frames_)) {
    const std::string identity = frames_[0].to_string();
    auto envelope = ParseEnvelope(frames_, 1);
    if (!envelope.ok()) {
      drops_.Record(identity, envelope.status());
      continue;
    }
    ++received_;
    Handle(identity, std::move(*envelope), events);
  }
}

void AgentChannelServer::Handle(const std::string& identity, Envelope envelope,
                                std::vector<Event>* events) {
  if (envelope.is(ChannelHello::kType)) {
    HandleHello(identity, envelope, events);
    return;
  }
  auto it = sessions_.find(identity);
  if (it == sessions_.end()) {
    // Typically a master restart: the agent still talks to us on its old session.
    (void)Send(identity, ChannelRejoin::kType, MakeHeader(name_, epoch_, 0, clock_),
               Encode(ChannelRejoin{"no session for this agent; say hello"}));
    drops_.Record(identity, FailedPrecondition(envelope.type + " before channel.hello"));
    return;
  }
  Session& session = it->second;
  session.last_heard = clock_.Now();
  if (session.state == SessionState::kLost) {
    // Heard again within the window without a new hello (a link blip): the session resumes.
    session.state = SessionState::kConnected;
    events->push_back({Event::Kind::kReconnected, identity});
    Replay(identity, session, /*only_due=*/false);
  }
  if (envelope.is(ChannelHeartbeat::kType)) {
    (void)Send(identity, ChannelHeartbeat::kType, MakeHeader(name_, epoch_, 0, clock_),
               Encode(ChannelHeartbeat{}));
  } else if (envelope.is(ChannelAck::kType)) {
    auto ack = envelope.Decode<ChannelAck>();
    if (!ack.ok()) return drops_.Record(identity, ack.status());
    for (uint64_t seq : ack->seqs) session.outbox.Ack(seq);
  } else if (envelope.header.seq != 0) {
    HandleReliable(identity, session, std::move(envelope), events);
  } else {
    events->push_back({Event::Kind::kMessage, identity, false, std::move(envelope)});
  }
}

void AgentChannelServer::HandleHello(const std::string& identity, const Envelope& envelope,
                                     std::vector<Event>* events) {
  auto hello = envelope.Decode<ChannelHello>();
  if (!hello.ok()) return drops_.Record(identity, hello.status());
  if (hello->agent_id != identity) {
    return drops_.Record(identity,
                         InvalidArgument("hello from socket identity " + Printable(identity) +
                                         " claims agent id " + Printable(hello->agent_id)));
  }
  auto [it, created] = sessions_.try_emplace(identity);
  Session& session = it->second;
  const bool restarted = !created && session.agent_epoch != envelope.header.epoch;
  session.agent_epoch = envelope.header.epoch;
  session.state = SessionState::kConnected;
  session.last_heard = clock_.Now();
  ChannelWelcome welcome{
      std::chrono::duration_cast<std::chrono::milliseconds>(config_.heartbeat_interval).count()};
  (void)Send(identity, ChannelWelcome::kType, MakeHeader(name_, epoch_, 0, clock_),
             Encode(welcome));
  events->push_back(
      {created ? Event::Kind::kConnected : Event::Kind::kReconnected, identity, restarted});
  Replay(identity, session, /*only_due=*/false);
}

void AgentChannelServer::HandleReliable(const std::string& identity, Session& session,
                                        Envelope envelope, std::vector<Event>* events) {
  const uint64_t seq = envelope.header.seq;
  if (session.acks_owed.empty()) owing_.push_back(identity);
  session.acks_owed.push_back(seq);
  if (session.acks_owed.size() >= kMaxAcksOwed) FlushAcks(identity, session);
  if (session.inbound.Accept(envelope.header.epoch, seq)) {
    events->push_back({Event::Kind::kMessage, identity, false, std::move(envelope)});
  }
}

void AgentChannelServer::Close(const std::string& agent_id) { sessions_.erase(agent_id); }

Status AgentChannelServer::SetReconnectWindow(const std::string& agent_id, Duration window) {
  auto it = sessions_.find(agent_id);
  if (it == sessions_.end()) return NotFound("no session for agent " + agent_id);
  it->second.reconnect_window = window;
  return Status::Ok();
}

void AgentChannelServer::FlushAcks() {
  for (const std::string& agent_id : std::exchange(owing_, {})) {
    if (auto it = sessions_.find(agent_id); it != sessions_.end()) FlushAcks(agent_id, it->second);
  }
}

void AgentChannelServer::FlushAcks(const std::string& agent_id, Session& session) {
  if (session.acks_owed.empty()) return;
  (void)SendEnvelope(socket_, {agent_id}, ChannelAck::kType, MakeHeader(name_, epoch_, 0, clock_),
                     Encode(ChannelAck{std::exchange(session.acks_owed, {})}));
}

void AgentChannelServer::Tick(std::vector<Event>* events) {
  FlushAcks();
  const MonoTime now = clock_.Now();
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    Session& session = it->second;
    if (session.state == SessionState::kConnected &&
        now - session.last_heard >= config_.silence_limit) {
      session.state = SessionState::kLost;
      session.lost_at = now;
      events->push_back({Event::Kind::kLost, it->first});
    }
    if (session.state == SessionState::kLost &&
        now - session.lost_at >= session.reconnect_window.value_or(config_.reconnect_window)) {
      events->push_back({Event::Kind::kExpired, it->first});
      it = sessions_.erase(it);
      continue;
    }
    if (session.state == SessionState::kConnected) Replay(it->first, session, /*only_due=*/true);
    ++it;
  }
}

Status AgentChannelServer::SendReliable(const std::string& agent_id, std::string type,
                                        std::string body) {
  auto it = sessions_.find(agent_id);
  if (it == sessions_.end()) return NotFound("no session for agent " + agent_id);
  Session& session = it->second;
  Outbox::Pending& pending = session.outbox.Add(std::move(type), std::move(body));
  if (session.state != SessionState::kConnected) return Status::Ok();  // replayed on reconnect
  Status sent =
      Send(agent_id, pending.type, MakeHeader(name_, epoch_, pending.seq, clock_), pending.body);
  if (sent.ok()) session.outbox.MarkSent(pending.seq, clock_.Now());
  return Status::Ok();
}

void AgentChannelServer::Replay(const std::string& agent_id, Session& session, bool only_due) {
  const MonoTime now = clock_.Now();
  auto pending = only_due ? session.outbox.Due(now, config_.resend_after) : session.outbox.All();
  for (Outbox::Pending* p : pending) {
    if (!Send(agent_id, p->type, MakeHeader(name_, epoch_, p->seq, clock_), p->body).ok()) break;
    session.outbox.MarkSent(p->seq, now);
  }
}

Status AgentChannelServer::Send(const std::string& agent_id, std::string_view type,
                                const Header& header, std::string_view body) {
  if (auto it = sessions_.find(agent_id); it != sessions_.end()) {
    FlushAcks(agent_id, it->second);  // ahead of it, in the same burst
  }
  return SendEnvelope(socket_, {agent_id}, type, header, body);
}

std::vector<AgentChannelServer::SessionInfo> AgentChannelServer::Sessions() const {
  std::vector<SessionInfo> out;
  for (const auto& [id, s] : sessions_) {
    out.push_back({id, s.state, s.last_heard, s.outbox.size()});
  }
  return out;
}

}  // namespace det::bus
