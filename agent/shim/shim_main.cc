// det-workload-shim: the small process that leads each workload's process group (see
// workload_shim.h), and the server that starts those by cloning itself (shim_server.h). Kept
// apart from det-agent so that it costs no more than a libc program.
#include <cstring>

#include "agent/shim/shim_server.h"
#include "agent/shim/workload_shim.h"

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], det::agent::kShimServerArg) == 0) {
    return det::agent::RunShimServer(det::agent::kShimServerFd);
  }
  if (argc < 2 || std::strcmp(argv[1], det::agent::kWorkloadShimArg) != 0) return 2;
  return det::agent::RunWorkloadShim(argc - 2, argv + 2);
}
