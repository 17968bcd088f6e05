// The docker runtime (container_runtime: docker): a workload whose start names an image runs in
// a container through its pump (docker/docker_pump.h); the runner follows the pump's phases, and
// this runtime adopts a container whose pump is gone and removes containers no workload owns.
#include "agent/docker_runtime.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "agent/docker/docker_client.h"
#include "agent/docker/docker_workload.h"
#include "agent/workload_record.h"
#include "common/files.h"
#include "common/process.h"

extern char** environ;

namespace det::agent {
namespace {

// A container's stop is the engine's (its grace, then SIGKILL): the pump gets this long beyond
// the grace before the agent kills the pump, and then removes the container itself.
constexpr auto kContainerStopMargin = std::chrono::seconds(30);

}  // namespace

std::string WithHostAndPort(const std::string& address, const std::string& host, int port) {
  if (host.empty() && port == 0) return address;
  const size_t scheme_end = address.find("://");
  const size_t authority = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const size_t path = std::min(address.find('/', authority), address.size());
  const size_t bracket = address.rfind(']', path);  // an IPv6 literal's end
  size_t colon = address.rfind(':', path);
  if (colon == std::string::npos || colon < authority ||
      (bracket != std::string::npos && bracket > colon && bracket >= authority)) {
    colon = path;  // no port
  }
  const std::string own_port = colon < path ? address.substr(colon + 1, path - colon - 1) : "";
  const std::string new_host = host.empty() ? address.substr(authority, colon - authority) : host;
  const std::string new_port = port != 0 ? std::to_string(port) : own_port;
  return address.substr(0, authority) + new_host + (new_port.empty() ? "" : ":" + new_port) +
         address.substr(path);
}

Status WriteContainerSpec(const bus::WorkloadStart& start, const ContainerHost& settings,
                          const std::vector<std::string>& argv, const std::string& dir) {
  const bool wants_info = start.env.contains("DET_TASK_TYPE");
  std::vector<bus::SlotInfo> slots;
  for (const bus::SlotInfo& slot : *settings.host.slots) {
    if (std::find(start.slot_ids.begin(), start.slot_ids.end(), slot.id) != start.slot_ids.end()) {
      slots.push_back(slot);
    }
  }
  DockerWorkload container;
  container.socket = settings.docker_socket;
  container.name = ContainerName(start.allocation_id);
  container.force_pull = start.container.force_pull;
  container.registry_auth = start.container.registry_auth_json;
  const std::string inside = dir + "/" + kContainerFolder;
  std::error_code made;
  std::filesystem::create_directories(inside, made);
  if (made) return Internal("cannot make " + inside + ": " + made.message());
  bus::WorkloadStart with_info = start;
  with_info.master_address =
      WithHostAndPort(start.master_address, settings.master_host, settings.master_port);
  // A trial's launcher reaches the master by DET_MASTER_URL, which the master sets.
  if (auto url = with_info.env.find("DET_MASTER_URL"); url != with_info.env.end()) {
    url->second = WithHostAndPort(url->second, settings.master_host, settings.master_port);
  }
  if (wants_info) {
    const std::string info_dir = inside + "/" + kRunInfoFolder;
    std::filesystem::create_directories(info_dir, made);
    if (made) return Internal("cannot make " + info_dir + ": " + made.message());
    with_info.container.binds.push_back(inside + "/" + kRunFolder + ":" + kRunMount);
  }
  std::vector<std::string> groups;  // the account's other groups on this host, as the shim sets
  if (start.run_as) {
    DET_RETURN_IF_ERROR(GiveFolder(inside, *start.run_as));
    for (gid_t group : AccountGroups(*start.run_as, inside).groups) {
      if (group != static_cast<gid_t>(start.run_as->gid)) groups.push_back(std::to_string(group));
    }
  }
  container.create = ContainerCreateBody(
      {&with_info, settings.host.agent_id, inside, argv,
       WorkloadEnvironment(with_info, settings.host, false, wants_info ? kRunInfoMount : ""), slots,
       settings.network_mode, std::move(groups),
       // The run folder is bound at /run/determined, and its workdir links back to the working
       // folder: seen from there it would be a loop.
       wants_info ? std::vector<std::string>{inside + "/" + kRunFolderParent}
                  : std::vector<std::string>{}});
  container.image = container.create.value("Image", "");
  const std::string spec_path = dir + "/" + kContainerSpecFile;
  const std::string spec = container.ToJson().dump();
  const int fd = open(spec_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                      0600);  // 0600: it may hold registry credentials
  const bool written =
      fd >= 0 && write(fd, spec.data(), spec.size()) == static_cast<ssize_t>(spec.size());
  if (fd >= 0) close(fd);
  if (!written) return Internal("cannot write " + spec_path + ": " + std::strerror(errno));
  return Status::Ok();
}

DockerRuntime::DockerRuntime(ShimLauncher& shims, Options options)
    : shims_(shims), options_(std::move(options)) {
  if (options_.pump_program.empty()) options_.pump_program = BesideThisProgram("det-docker-pump");
}

Result<pid_t> DockerRuntime::Spawn(const bus::WorkloadStart& start, const std::string& dir) {
  DET_RETURN_IF_ERROR(
      WriteContainerSpec(start, options_.containers, WorkloadArgv(start.entrypoint), dir));
  return SpawnPump(dir);
}

Result<pid_t> DockerRuntime::SpawnPump(const std::string& dir) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  return shims_.Spawn({options_.pump_program, dir}, env, dir);
}

std::string DockerRuntime::Phase(const std::string& dir) const {
  return FileText(dir, kContainerPhaseFile);
}

Duration DockerRuntime::PrepareStop(const std::string& dir, Duration grace) {
  // The pump asks the engine to stop the container with this grace.
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(grace).count();
  (void)WriteFileInPlace(dir + "/" + kStopGraceFile, std::to_string(seconds));
  return kContainerStopMargin;
}

void DockerRuntime::CleanUp(const std::string& allocation_id) {
  // Gone already unless the pump was killed.
  DockerClient docker(options_.containers.docker_socket);
  if (Status removed = docker.Remove(ContainerName(allocation_id)); !removed.ok()) {
    spdlog::warn("{}: {}", allocation_id, removed.message());
  }
}

std::string DockerRuntime::Ending(const std::string& dir) const {
  return FileText(dir, kContainerEndFile);
}

bool DockerRuntime::Owns(const std::string& dir) const {
  std::error_code ec;
  return std::filesystem::exists(dir + "/" + kContainerSpecFile, ec);
}

std::optional<pid_t> DockerRuntime::Readopt(const std::string& allocation_id,
                                            const std::string& dir) {
  // A container outlives its pump (the agent's service may have taken the pump with it): a new
  // pump adopts it, unless the old one recorded the end.
  if (!FileText(dir, kExitStatusFile).empty() || !FileText(dir, kContainerEndFile).empty()) {
    return std::nullopt;
  }
  Result<pid_t> pid = SpawnPump(dir);
  if (!pid.ok()) {
    spdlog::warn("{}: cannot start a pump for its container: {}", allocation_id,
                 pid.status().message());
    return std::nullopt;
  }
  spdlog::info("{}: its pump had gone; a new one adopts container {}", allocation_id,
               ContainerName(allocation_id));
  return *pid;
}

void DockerRuntime::Sweep(const std::set<std::string>& known) {
  DockerClient docker(options_.containers.docker_socket);
  Result<std::vector<ContainerState>> ours =
      docker.List(kAgentIdLabel, options_.containers.host.agent_id);
  if (!ours.ok()) {
    spdlog::warn("cannot list this agent's containers: {}", ours.status().message());
    return;
  }
  for (const ContainerState& container : *ours) {
    auto label = container.labels.find(kAllocationIdLabel);
    if (label != container.labels.end() && known.count(label->second)) continue;
    spdlog::info("removing container {}: no workload of this agent runs in it", container.id);
    (void)docker.Remove(container.id);
  }
}

std::string DockerRuntime::Where(const std::string& allocation_id) const {
  return " in container " + ContainerName(allocation_id);
}

}  // namespace det::agent
