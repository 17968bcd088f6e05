#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "bus/agent_channel.h"
#include "bus/backoff.h"
#include "bus/drop_log.h"
#include "bus/envelope.h"
#include "bus/reliable.h"
#include "bus/security.h"
#include "bus/socket.h"

namespace det::bus {

// The agent's end of the agent channel: a DEALER whose identity is the agent id.
//
// Desired state: joined to the master (hello answered by welcome), heartbeating, with every
// reliable message delivered once. Actual state: what the socket and the clock say. When the
// master has been silent for `silence_limit` the client drops the socket, waits a jittered
// exponential backoff and joins again with a fresh socket; after a welcome it replays every
// reliable message the master has not acknowledged. A master that has no session for it (it
// restarted) answers with a rejoin: the client joins again on the same socket and sends nothing
// else until the welcome. After `max_attempts` failed joins in a row
// (0: never give up) it reports GaveUp and stops.
//
// Acknowledgements are owed, not sent at once: they go out in one message just before the next
// message the client sends, or at FlushAcks() or Tick(), so that a command and the report it
// causes (a workload's start and its states) cross the link together.
//
// Threading: owned by one actor; all methods on that actor's thread. The owner polls socket()
// (null while waiting to reconnect), calls Receive() when readable, FlushAcks() at the end of each
// turn of its loop, and Tick() at least every heartbeat interval (NextWakeup() says when the next
// timer is due).
class AgentChannelClient {
 public:
  struct Event {
    enum class Kind { kConnected, kDisconnected, kMessage, kGaveUp };
    Kind kind;
    bool master_restarted = false;  // kConnected: the master is a new incarnation
    Envelope message;               // kMessage only
  };
  enum class State { kJoining, kConnected, kWaitingToReconnect, kGaveUp };

  AgentChannelClient(zmq::context_t& context, std::string agent_id, std::string endpoint,
                     SocketSecurity security, const Clock& clock, AgentChannelConfig config = {},
                     BackoffPolicy backoff = {}, int max_attempts = 0, SocketLimits limits = {});

  // Opens the socket and says hello.
  Status Start();
  zmq::socket_t* socket() { return socket_.get(); }
  State state() const { return state_; }

  void Receive(std::vector<Event>* events);
  void Tick(std::vector<Event>* events);  // flushes owed acknowledgements too
  MonoTime NextWakeup() const;
  // Sends the acknowledgements owed for reliable messages received (one message for all).
  void FlushAcks();

  // Reliable: numbered, retained until the master acknowledges it, replayed after reconnects.
  template <Message M>
  void SendReliable(const M& message) {
    QueueReliable(std::string(M::kType), Encode(message));
  }
  // Best effort: Unavailable unless connected.
  template <Message M>
  Status SendBestEffort(const M& message) {
    if (state_ != State::kConnected) return Unavailable("not connected to the master");
    return Send(M::kType, 0, Encode(message));
  }

  // Message types the owner re-sends itself after a master restart (it knows better what the new
  // master lacks): their retained copies are dropped then instead of replayed, so the owner's
  // re-sent ones are not preceded by newer ones.
  void ResendsOnMasterRestart(std::string type) { owner_resends_.push_back(std::move(type)); }

  size_t unacknowledged() const { return outbox_.size(); }
  int reconnects() const { return reconnects_; }
  const DropLog& drops() const { return drops_; }

 private:
  Status OpenAndHello();
  void Disconnect(std::vector<Event>* events);
  void Handle(Envelope envelope, std::vector<Event>* events);
  void HandleWelcome(const Envelope& envelope, std::vector<Event>* events);
  void QueueReliable(std::string type, std::string body);
  void Replay(bool only_due);
  Status Send(std::string_view type, uint64_t seq, std::string_view body);

  zmq::context_t& context_;
  std::string agent_id_;
  std::string endpoint_;
  SocketSecurity security_;
  const Clock& clock_;
  AgentChannelConfig config_;
  Backoff backoff_;
  int max_attempts_;
  SocketLimits limits_;
  uint64_t epoch_;
  DropLog drops_;

  std::unique_ptr<zmq::socket_t> socket_;
  State state_ = State::kJoining;
  std::optional<uint64_t> master_epoch_;
  MonoTime last_heard_{};
  MonoTime last_sent_{};
  MonoTime joining_since_{};
  MonoTime reconnect_at_{};
  int failed_joins_ = 0;
  int reconnects_ = 0;
  Outbox outbox_;
  std::vector<std::string> owner_resends_;
  DedupWindow inbound_;
  std::vector<uint64_t> acks_owed_;  // reliable messages received, not yet acknowledged
  // Acknowledgements owed before they go out anyway (a flood read in one Receive() is
  // acknowledged in messages of at most this many).
  static constexpr size_t kMaxAcksOwed = 1024;
  std::vector<zmq::message_t> frames_;
};

}  // namespace det::bus
