#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "bus/agent_channel.h"
#include "bus/drop_log.h"
#include "bus/envelope.h"
#include "bus/reliable.h"
#include "bus/security.h"
#include "bus/socket.h"

namespace det::bus {

// The master's end of the agent channel: one ROUTER socket, one session per agent id.
//
// Desired state: every agent that said hello has a session; its reliable commands reach it exactly
// once, in order of sending; silence is noticed. Actual state: what arrives on the socket and what
// the clock says. On a difference it acts: an agent silent for `silence_limit` is reported Lost and
// keeps its session (and its unacknowledged commands) for `reconnect_window`; a hello within the
// window reports Reconnected and replays the commands; after the window the session is reported
// Expired and dropped.
//
// Acknowledgements are owed, not sent at once: an agent's go out in one message just before the
// next message to it, or at FlushAcks() or Tick(), so that the reports a burst brings (a
// workload's states) cost one acknowledgement, not one each.
//
// Threading: owned by one actor; all methods on that actor's thread. The owner polls socket() and
// calls Receive() when readable, FlushAcks() at the end of each turn of its loop, and Tick() at
// least every heartbeat interval.
class AgentChannelServer {
 public:
  struct Event {
    enum class Kind { kConnected, kReconnected, kMessage, kLost, kExpired };
    Kind kind;
    std::string agent_id;
    bool agent_restarted = false;  // kReconnected: the agent process is a new incarnation
    Envelope message;              // kMessage only (channel.* messages are never surfaced)
  };
  enum class SessionState { kConnected, kLost };
  struct SessionInfo {
    std::string agent_id;
    SessionState state;
    MonoTime last_heard;
    size_t unacknowledged;
  };

  AgentChannelServer(zmq::context_t& context, std::string name, const Clock& clock,
                     AgentChannelConfig config = {}, SocketLimits limits = {});

  // Binds the ROUTER; returns the bound endpoint.
  Result<std::string> Bind(const std::string& endpoint, const SocketSecurity& security);
  zmq::socket_t& socket() { return socket_; }

  // Handles every message waiting on the socket (never blocks) and appends the results.
  void Receive(std::vector<Event>* events);
  // Liveness, expiry and resends; flushes owed acknowledgements too.
  void Tick(std::vector<Event>* events);
  // Sends the acknowledgements owed to every agent (one message each).
  void FlushAcks();

  // Reliable: retained until acknowledged, resent and replayed after reconnects. NotFound if no
  // session exists for agent_id.
  template <Message M>
  Status SendCommand(const std::string& agent_id, const M& message) {
    return SendReliable(agent_id, std::string(M::kType), Encode(message));
  }
  // Best effort: dropped if the agent is not connected.
  template <Message M>
  Status SendBestEffort(const std::string& agent_id, const M& message) {
    return Send(agent_id, M::kType, MakeHeader(name_, epoch_, 0, clock_), Encode(message));
  }

  // The agent's own reconnect window (its resource pool's `agent_reconnect_wait`) in place of the
  // channel's; NotFound if no session exists for agent_id.
  Status SetReconnectWindow(const std::string& agent_id, Duration window);

  // Drops the agent's session at once (it said it is leaving): no Lost or Expired event follows.
  void Close(const std::string& agent_id);

  std::vector<SessionInfo> Sessions() const;
  const DropLog& drops() const { return drops_; }
  uint64_t epoch() const { return epoch_; }
  uint64_t received() const { return received_; }  // well-formed messages, on the owner's thread

 private:
  struct Session {
    SessionState state = SessionState::kConnected;
    uint64_t agent_epoch = 0;
    MonoTime last_heard;
    MonoTime lost_at;
    std::optional<Duration> reconnect_window;  // unset: the channel's
    Outbox outbox;
    DedupWindow inbound;
    std::vector<uint64_t> acks_owed;  // its reliable messages received, not yet acknowledged
  };

  Status SendReliable(const std::string& agent_id, std::string type, std::string body);
  Status Send(const std::string& agent_id, std::string_view type, const Header& header,
              std::string_view body);
  void Handle(const std::string& identity, Envelope envelope, std::vector<Event>* events);
  void HandleHello(const std::string& identity, const Envelope& envelope,
                   std::vector<Event>* events);
  void HandleReliable(const std::string& identity, Session& session, Envelope envelope,
                      std::vector<Event>* events);
  void Replay(const std::string& agent_id, Session& session, bool only_due);
  void FlushAcks(const std::string& agent_id, Session& session);

  // Acknowledgements owed to one agent before they go out anyway (a flood read in one Receive()
  // is acknowledged in messages of at most this many).
  static constexpr size_t kMaxAcksOwed = 1024;

  zmq::socket_t socket_;
  std::string name_;
  const Clock& clock_;
  AgentChannelConfig config_;
  uint64_t epoch_;
  uint64_t received_ = 0;
  DropLog drops_;
  std::map<std::string, Session> sessions_;
  std::vector<std::string> owing_;  // agents owed acknowledgements since the last FlushAcks()
  std::vector<zmq::message_t> frames_;
};

}  // namespace det::bus
