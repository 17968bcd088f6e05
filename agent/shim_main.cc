// det-workload-shim: the small process that leads each workload's process group (see
// workload_shim.h). Kept apart from det-agent so that starting it costs no more than a libc
// program: it runs once per workload.
#include <cstring>

#include "agent/workload_shim.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], det::agent::kWorkloadShimArg) != 0) return 2;
  return det::agent::RunWorkloadShim(argc - 2, argv + 2);
}
