#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "bus/catalog/snapshot.h"
#include "bus/drop_log.h"
#include "bus/envelope.h"
#include "bus/event_broker.h"
#include "bus/security.h"
#include "bus/socket.h"

namespace det::bus {

// An event as a subscriber sees it.
struct BusEvent {
  std::string type;
  Header header;
  std::string body;

  template <Message M>
  Result<M> Decode() const {
    if (type != M::kType)
      return InvalidArgument("expected " + std::string(M::kType) + ", got " + type);
    return bus::Decode<M>(body);
  }
};

struct EventSubscriberConfig {
  Duration snapshot_timeout = std::chrono::seconds(2);  // re-ask if no snapshot reply by then
  Duration broker_silence = std::chrono::seconds(5);    // no beacon for this long: resync
};

// A late-joining, self-healing subscriber (the Clone pattern's client).
//
// Desired state: a view equal to the broker's retained state plus every later event, in order,
// with no gap. Actual state: the snapshot it last loaded and the sequence numbers it has applied
// per stream (sender, epoch, type). It subscribes first, then asks for a snapshot, buffering live
// events meanwhile; it drops buffered events the snapshot already reflects and applies the rest.
// On a gap in any stream, a new broker epoch, or a silent broker, it resyncs: the consumer gets a
// kReset update, then the retained events again, then live events.
//
// Threading: owned by one actor; poll sockets(), call Receive() when readable and Tick() often.
class EventSubscriber {
 public:
  struct Update {
    enum class Kind { kReset, kEvent };
    Kind kind;
    BusEvent event;  // kEvent only
  };

  EventSubscriber(zmq::context_t& context, std::string name, EventBrokerEndpoints endpoints,
                  SocketSecurity security, const Clock& clock, std::vector<std::string> prefixes,
                  EventSubscriberConfig config = {}, SocketLimits limits = {});

  Status Start();
  // The sockets to poll: the subscription, and the snapshot request in flight (if any).
  std::vector<zmq::socket_t*> sockets();

  void Receive(std::vector<Update>* updates);
  void Tick(std::vector<Update>* updates);

  bool synced() const { return !syncing_; }
  uint64_t resyncs() const { return resyncs_; }
  const DropLog& drops() const { return drops_; }

 private:
  using StreamKey = std::tuple<std::string, uint64_t, std::string>;
  static constexpr size_t kMaxBuffered = 100000;

  void RequestSnapshot();
  void Resync(const std::string& reason);
  void ReceiveSnapshot(std::vector<Update>* updates);
  void LoadSnapshot(const SnapshotReply& reply, std::vector<Update>* updates);
  // Applies one live event in order; false if it triggered a resync.
  bool Apply(BusEvent event, std::vector<Update>* updates);

  zmq::context_t& context_;
  std::string name_;
  EventBrokerEndpoints endpoints_;
  SocketSecurity security_;
  const Clock& clock_;
  std::vector<std::string> prefixes_;
  EventSubscriberConfig config_;
  SocketLimits limits_;
  DropLog drops_;

  std::unique_ptr<zmq::socket_t> sub_;
  std::unique_ptr<zmq::socket_t> snapshot_;
  bool syncing_ = true;
  MonoTime requested_at_{};
  MonoTime last_beacon_{};
  uint64_t broker_epoch_ = 0;
  uint64_t resyncs_ = 0;
  std::map<StreamKey, uint64_t> applied_;
  std::vector<BusEvent> buffered_;
  std::vector<zmq::message_t> frames_;
};

}  // namespace det::bus
