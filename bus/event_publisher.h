#pragma once

#include <deque>
#include <map>
#include <string>
#include <zmq.hpp>

#include "bus/agent_channel.h"
#include "bus/envelope.h"
#include "bus/security.h"
#include "bus/socket.h"

namespace det::bus {

// Publishes events to the broker's XSUB endpoint.
//
// Each event carries the publisher's name and epoch and a sequence number per event type
// (1, 2, 3, ... for each type), so a subscriber filtering by type prefix still sees a gap-free
// series for every type it takes. The socket is an XPUB connected to the broker: it sees the
// broker's subscription arrive and holds events back until then, so nothing is lost to the
// slow-joiner effect of a plain PUB.
//
// Threading: owned by one actor. Call Pump() from the actor's loop (Publish does too) so held
// events go out once the broker is there.
class EventPublisher {
 public:
  EventPublisher(zmq::context_t& context, std::string name, const Clock& clock,
                 SocketLimits limits = {});

  Status Connect(const std::string& broker_publish_endpoint, const SocketSecurity& security);

  // `key` names the state slot this event sets (empty: an event that is not retained);
  // `tombstone` removes that slot instead.
  template <Message M>
  Status Publish(const M& event, std::string key = "", bool tombstone = false) {
    return PublishEncoded(std::string(M::kType), Encode(event), std::move(key), tombstone);
  }
  Status PublishEncoded(std::string type, std::string body, std::string key, bool tombstone);

  // Reads subscription notices and flushes held events. Never blocks.
  void Pump();
  // From now on every event waits for the next Pump(), so that the events of one turn of the
  // owner's loop reach the broker back to back (it wakes once for them, not once each). The owner
  // then calls Pump() at the end of each turn.
  void HoldUntilPump() { hold_until_pump_ = true; }
  // Pumps until the broker's subscription arrived or `timeout` passed (real time).
  bool WaitReady(Duration timeout);
  bool ready() const { return ready_; }
  zmq::socket_t& socket() { return socket_; }
  uint64_t epoch() const { return epoch_; }

 private:
  struct Held {
    std::string type;
    Header header;
    std::string body;
  };
  static constexpr size_t kMaxHeld = 100000;

  zmq::socket_t socket_;
  std::string name_;
  const Clock& clock_;
  uint64_t epoch_;
  bool ready_ = false;
  bool hold_until_pump_ = false;
  std::map<std::string, uint64_t, std::less<>> next_seq_;
  std::deque<Held> held_;
};

}  // namespace det::bus
