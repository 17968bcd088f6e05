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

#include "agent/shim/shim_protocol.h"

namespace det::agent {

// The server's loop over `fd`. Returns the exit code: 0 when the agent closed its end.
int RunShimServer(int fd);

}  // namespace det::agent
