#pragma once

// The agent channel's own protocol (ROUTER at the master, DEALER at each agent). Application
// messages (agent.*, master commands) ride on the same channel; see agent.h.

#include <cstdint>
#include <string>
#include <vector>

#include "bus/codec.h"

namespace det::bus {

// Agent -> master, first message of every connection. The header's epoch is the agent process's
// incarnation; a new epoch tells the master the agent restarted.
struct ChannelHello {
  static constexpr std::string_view kType = "channel.hello";
  std::string agent_id;
  bool operator==(const ChannelHello&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agent_id", s.agent_id, kRequired);
  }
};

// Master -> agent, answers a hello. After it, both sides replay their unacknowledged messages.
struct ChannelWelcome {
  static constexpr std::string_view kType = "channel.welcome";
  int64_t heartbeat_interval_ms = 0;  // what the master expects; informative
  bool operator==(const ChannelWelcome&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("heartbeat_interval_ms", s.heartbeat_interval_ms);
  }
};

// Master -> a peer it has no session for (e.g. after a master restart): say hello again.
struct ChannelRejoin {
  static constexpr std::string_view kType = "channel.rejoin";
  std::string reason;
  bool operator==(const ChannelRejoin&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("reason", s.reason);
  }
};

// Both ways. Any message proves liveness; heartbeats fill the silence.
struct ChannelHeartbeat {
  static constexpr std::string_view kType = "channel.heartbeat";
  bool operator==(const ChannelHeartbeat&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

// Both ways: the reliable sequence numbers received (duplicates included).
struct ChannelAck {
  static constexpr std::string_view kType = "channel.ack";
  std::vector<uint64_t> seqs;
  bool operator==(const ChannelAck&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("seqs", s.seqs, kRequired);
  }
};

}  // namespace det::bus
