// det-docker-pump DIR: stands in for a workload's container (docker_pump.h). Started by the
// agent's runner, under the workload shim, when the agent's runtime is docker.
#include <cstdio>

#include "agent/docker/docker_pump.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: det-docker-pump DIR\n");
    return 2;
  }
  return det::agent::RunDockerPump(argv[1]);
}
