#include "agent/docker/docker_workload.h"

#include <unistd.h>

#include <algorithm>

namespace det::agent {

std::string ContainerName(const std::string& allocation_id) { return "det-" + allocation_id; }

nlohmann::json DockerWorkload::ToJson() const {
  return {{"socket", socket},
          {"name", name},
          {"image", image},
          {"force_pull", force_pull},
          {"registry_auth", registry_auth},
          {"create", create}};
}

Result<DockerWorkload> DockerWorkload::FromJson(const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object()) return InvalidArgument(std::string(kContainerSpecFile) + " is not JSON");
  DockerWorkload workload;
  try {
    workload.socket = json.at("socket").get<std::string>();
    workload.name = json.at("name").get<std::string>();
    workload.image = json.at("image").get<std::string>();
    workload.force_pull = json.value("force_pull", false);
    workload.registry_auth = json.value("registry_auth", "");
    workload.create = json.at("create");
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string(kContainerSpecFile) + ": " + e.what());
  }
  if (!workload.create.is_object()) {
    return InvalidArgument(std::string(kContainerSpecFile) + ": create is not an object");
  }
  return workload;
}

nlohmann::json ContainerCreateBody(const ContainerRequest& request) {
  const bus::WorkloadStart& start = *request.start;
  std::vector<std::string> gpus;
  std::string slot_type;
  for (const bus::SlotInfo& slot : request.slots) {
    slot_type = slot.type;
    if (slot.type == "cuda") gpus.push_back(slot.uuid.empty() ? slot.id : slot.uuid);
  }
  std::vector<std::string> env = request.env;
  const bool sets_home = std::any_of(env.begin(), env.end(),
                                     [](const std::string& e) { return e.rfind("HOME=", 0) == 0; });
  if (!sets_home) env.push_back("HOME=" + request.dir);
  std::vector<std::string> binds = {request.dir + ":" + request.dir};
  binds.insert(binds.end(), start.container.binds.begin(), start.container.binds.end());
  nlohmann::json host = {{"Binds", binds},
                         {"NetworkMode", request.network_mode},
                         {"Init", true},
                         {"AutoRemove", false}};
  if (start.container.shm_size_bytes > 0) host["ShmSize"] = start.container.shm_size_bytes;
  if (!request.group_add.empty()) host["GroupAdd"] = request.group_add;
  for (const std::string& path : request.hidden) host["Tmpfs"][path] = "ro,size=4k";
  if (!gpus.empty()) {
    host["DeviceRequests"] = {
        {{"Driver", "nvidia"}, {"DeviceIDs", gpus}, {"Capabilities", {{"gpu"}}}}};
  }
  return {{"Image", start.container.ImageFor(slot_type)},
          {"Cmd", request.argv},
          {"Env", env},
          {"WorkingDir", request.dir},
          {"User", start.run_as
                       ? std::to_string(start.run_as->uid) + ":" + std::to_string(start.run_as->gid)
                       : std::to_string(getuid()) + ":" + std::to_string(getgid())},
          {"Labels",
           {{kAgentIdLabel, request.agent_id},
            {kAllocationIdLabel, start.allocation_id},
            {kTaskIdLabel, start.task_id}}},
          {"Tty", false},
          {"OpenStdin", false},
          {"StopSignal", "SIGTERM"},
          {"HostConfig", host}};
}

}  // namespace det::agent
