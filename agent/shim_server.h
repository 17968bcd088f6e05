#pragma once

// `det-workload-shim __server`: a long-lived, single-threaded process that starts each workload's
// shim (workload_shim.h) by cloning itself instead of the agent executing the shim program once per
// workload. On a virtual machine a new program costs about a millisecond of CPU before main
// (glibc's CPUID probes trap to the hypervisor); a clone of this small process costs a tenth of
// that. The clone is the shim: same folder, same process group, same exit record, the same
// program on /proc/PID/exe; only its command line is the server's.
//
// The agent starts the server with one end of a unix stream socket as fd kShimServerFd and sends
// one request per workload: a 4-byte length (host order) and the payload EncodeShimRequest makes.
// For each, the server clones itself with CLONE_PARENT, so the shim is the agent's child, reaped
// by the agent exactly as a shim it had spawned itself; the clone makes itself the leader of a new
// process group, points stdin at /dev/null and stdout and stderr at DIR's output files, moves into
// DIR and runs the shim. The server answers 8 bytes, ShimReply, once the clone has done all that
// (so the agent may signal the group at once) or failed to. It exits when the agent's end closes.

#include <sys/types.h>

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

// The server's loop over `fd`. Returns the exit code: 0 when the agent closed its end.
int RunShimServer(int fd);

}  // namespace det::agent
