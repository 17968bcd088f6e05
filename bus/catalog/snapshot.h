#pragma once

// The event bus's snapshot service (the ZeroMQ guide's Clone pattern): a late or resyncing
// subscriber asks for the retained state and the per-stream sequence numbers it reflects.

#include <cstdint>
#include <string>
#include <vector>

#include "bus/codec.h"
#include "bus/envelope.h"

namespace det::bus {

struct SnapshotRequest {
  static constexpr std::string_view kType = "snapshot.request";
  std::vector<std::string> prefixes;  // event types to include; empty: all
  bool operator==(const SnapshotRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("prefixes", s.prefixes);
  }
};

// One retained event: the latest event for its key.
struct RetainedEvent {
  std::string type;
  Header header;
  Bytes body;
  bool operator==(const RetainedEvent&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("type", s.type, kRequired);
    v("header", s.header, kRequired);
    v("body", s.body, kRequired);
  }
};

// The last sequence number the snapshot reflects for one stream (sender, epoch, type).
struct StreamPosition {
  std::string sender;
  uint64_t epoch = 0;
  std::string type;
  uint64_t seq = 0;
  bool operator==(const StreamPosition&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("sender", s.sender, kRequired);
    v("epoch", s.epoch, kRequired);
    v("type", s.type, kRequired);
    v("seq", s.seq, kRequired);
  }
};

struct SnapshotReply {
  static constexpr std::string_view kType = "snapshot.reply";
  uint64_t broker_epoch = 0;  // the broker incarnation; its beacons carry the same epoch
  std::vector<RetainedEvent> events;
  std::vector<StreamPosition> positions;
  bool operator==(const SnapshotReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("broker_epoch", s.broker_epoch, kRequired);
    v("events", s.events);
    v("positions", s.positions);
  }
};

// Broker -> subscribers, every beacon interval: proves the broker is alive and names its epoch, so
// a subscriber notices a restarted broker (whose retained state starts over) and resyncs.
struct BrokerBeacon {
  static constexpr std::string_view kType = "bus.beacon";
  bool operator==(const BrokerBeacon&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

}  // namespace det::bus
