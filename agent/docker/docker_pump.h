#pragma once

// `det-docker-pump DIR`: the process that stands in for a workload's container (see
// docker_workload.h for the files it shares with the runner).
//
// It reads DIR/container.json and, unless DIR/container_id names a container it adopts:
// pulls the image (when missing, or always with force_pull; progress goes to the output and
// container_phase says PULLING), creates the container (one of that name already there is
// adopted), writes container_id, starts it (RUNNING). Then it copies the container's output to
// its own stdout and stderr, from log_cursor on, until the container stops; reads its exit code
// and whether it was killed for memory; removes the container; and exits with the container's
// exit code (125 when it could not start one, as `docker run`).
//
// SIGTERM (or SIGINT) stops the container the engine's way: its stop signal, then SIGKILL after
// the seconds in DIR/stop_grace (10 when absent). A pump started again after an agent restart
// (the previous one was killed with the agent's service) adopts the container by the id in
// container_id and resumes its output after log_cursor; a container that vanished meanwhile ends
// the workload as "lost".

#include <string>

namespace det::agent {

// Returns the process's exit code.
int RunDockerPump(const std::string& dir);

}  // namespace det::agent
