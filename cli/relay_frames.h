#pragma once

// What det and its relay (relay.h) say to each other over the relay's unix socket: frames of a
// 4-byte length (host order) and that many bytes; det sends an encoded bus::RpcRequest, the relay
// answers the master's encoded bus::RpcReply. And how det hands the relay its target.

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "cli/relay.h"

namespace det::cli {

// Larger frames end the connection: the gateway's own limit with room for the envelope.
inline constexpr uint32_t kMaxRelayFrameBytes = (16u << 20) + (1u << 16);

inline std::string RelayFrame(std::string_view payload) {
  const auto size = static_cast<uint32_t>(payload.size());
  std::string frame(reinterpret_cast<const char*>(&size), sizeof size);
  frame += payload;
  return frame;
}

// The first whole frame at the start of `buffer`, taken off it; nullopt while incomplete. A frame
// over the limit sets *too_large.
inline std::optional<std::string> TakeRelayFrame(std::string& buffer, bool* too_large) {
  uint32_t size = 0;
  if (buffer.size() < sizeof size) return std::nullopt;
  std::memcpy(&size, buffer.data(), sizeof size);
  if (size > kMaxRelayFrameBytes) {
    *too_large = true;
    return std::nullopt;
  }
  if (buffer.size() < sizeof size + size) return std::nullopt;
  std::string payload = buffer.substr(sizeof size, size);
  buffer.erase(0, sizeof size + size);
  return payload;
}

// The target as det writes it to the relay's stdin: one line each for the endpoint, the mode
// ("plaintext" or "curve"), the master's public key, the client's public and secret keys (Z85),
// the idle limit in seconds (1 to 3600).
std::string WriteRelayTarget(const RelayTarget& target);
std::optional<RelayTarget> ReadRelayTarget(std::string_view text);

}  // namespace det::cli
