#pragma once

// What the agent and the shim server (shim_server.h) say to each other over their unix socket:
// the server's arguments and descriptor, its ready byte, one request per workload and its reply.
// Standard library only: linked into det-agent and into the static det-workload-shim alike.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace det::agent {

inline constexpr const char* kShimServerArg = "__server";
inline constexpr int kShimServerFd = 3;
// The byte the server sends first, once it serves: a program that never sends it (a shim from
// before the server) is not used as one.
inline constexpr char kShimServerReady = 'R';
// A request larger than this is refused by the agent before sending (it starts the shim program
// itself then) and ends the server if one arrives.
inline constexpr uint32_t kMaxShimRequestBytes = 8u << 20;

struct ShimRequest {
  std::string dir;                // the workload's folder
  std::vector<std::string> argv;  // the workload's argv (not empty)
  std::vector<std::string> env;   // the shim's environment: "NAME=value"
};

struct ShimReply {
  int32_t pid = -1;   // the shim, a child of the agent: the agent reaps it, also when `error` != 0
  int32_t error = 0;  // 0, or the errno of the step that failed (the clone, a file, the folder)
};

// The payload: DIR, the argv count and each argv entry, then each environment entry, every one
// NUL-terminated (an entry with a NUL inside is cut there, as exec would cut it). No length prefix.
std::string EncodeShimRequest(const ShimRequest& request);
// False when `payload` is not what EncodeShimRequest makes (no argv, a count that is not a number
// or larger than what follows, a missing final NUL).
bool DecodeShimRequest(std::string_view payload, ShimRequest* out);

}  // namespace det::agent
