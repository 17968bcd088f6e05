#pragma once

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "bus/catalog/snapshot.h"
#include "bus/drop_log.h"
#include "bus/envelope.h"
#include "bus/security.h"
#include "bus/socket.h"
#include "common/clock.h"

namespace det::bus {

struct EventBrokerEndpoints {
  std::string publish;    // XSUB: publishers connect here
  std::string subscribe;  // XPUB: subscribers connect here
  std::string snapshot;   // ROUTER: subscribers ask for the retained state here
};

// The event bus: an XSUB/XPUB forwarder with a last-value cache and a snapshot service (the
// ZeroMQ guide's Clone pattern, with the cache inside the broker so a snapshot is never behind the
// events a subscriber has already seen).
//
// Every event passing through is checked (a malformed one is counted and dropped, not forwarded),
// then recorded: its stream position (sender, epoch, type) -> seq, and, when its header has a key,
// the retained state for that key (a tombstone removes it). A snapshot request returns the
// retained events and positions matching the requested type prefixes. A beacon goes out every
// `beacon_interval` so subscribers can tell a live broker from a restarted one.
//
// Threading: Start() runs the broker on its own thread until Stop() or destruction.
class EventBroker {
 public:
  EventBroker(zmq::context_t& context, const Clock& clock, SocketLimits limits = {},
              Duration beacon_interval = std::chrono::seconds(1));
  ~EventBroker();
  EventBroker(const EventBroker&) = delete;
  EventBroker& operator=(const EventBroker&) = delete;

  // Binds all three sockets; returns the endpoints actually bound.
  Result<EventBrokerEndpoints> Bind(const EventBrokerEndpoints& endpoints,
                                    const SocketSecurity& security);
  // Binds one more endpoint of each kind, without security, for publishers and subscribers inside
  // the broker's process (inproc://). Call before Start().
  Result<EventBrokerEndpoints> BindLocal(const EventBrokerEndpoints& endpoints);
  void Start();
  void Stop();

  uint64_t forwarded() const { return forwarded_.load(); }
  uint64_t dropped() const { return drops_.total(); }
  uint64_t epoch() const { return epoch_; }

 private:
  using StreamKey = std::tuple<std::string, uint64_t, std::string>;  // sender, epoch, type

  // Subscribes the XSUB socket to every publisher's events (once, from the first Bind*).
  void SubscribeToEverything();
  void Run();
  void ForwardEvents();
  void AnswerSnapshots();
  void DrainSubscriptions();
  void Record(const Envelope& event);
  void SendBeacon();
  SnapshotReply BuildSnapshot(const std::vector<std::string>& prefixes) const;

  const Clock& clock_;
  Duration beacon_interval_;
  uint64_t epoch_;
  bool subscribed_ = false;  // SubscribeToEverything() was sent
  uint64_t beacon_seq_ = 0;
  MonoTime last_beacon_{};
  zmq::socket_t xsub_;
  zmq::socket_t xpub_;
  zmq::socket_t snapshot_;
  DropLog drops_;
  std::map<std::string, RetainedEvent> retained_;
  std::map<StreamKey, uint64_t> positions_;
  std::map<std::string, uint64_t> latest_epoch_;  // per sender, to prune dead epochs
  std::atomic<uint64_t> forwarded_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<zmq::message_t> frames_;
};

}  // namespace det::bus
