#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "autoscaler/contract.h"
#include "common/clock.h"
#include "common/config.h"

namespace det::autoscaler {

// `type: local` keys beyond Determined's: how to start an agent on this host.
struct LocalProviderOptions {
  std::string cluster_id;  // tags the processes; only this cluster's are listed
  std::string master_host;
  int master_port = 0;                  // the master's agent port
  std::string agent_binary;             // `agent_binary`; default: det-agent beside this program
  std::vector<std::string> agent_args;  // `agent_args`: appended (e.g. --artificial-slots 2)
  std::filesystem::path work_dir;       // `work_dir`: each instance's folder and log
};

// Reads `agent_binary`, `agent_args` and `work_dir` from a `type: local` provider section into
// `options` (errors name the field).
Status ReadLocalProviderOptions(const YAML::Node& provider, LocalProviderOptions* options);

// Instances are det-agent processes on this host, each in a session of its own. The process is
// the instance: its environment carries the tags (DET_CLUSTER_ID, DET_INSTANCE_ID,
// DET_INSTANCE_POOL, DET_INSTANCE_LAUNCHED, DET_LOCAL_PROVIDER_DIR = work_dir), so List() finds
// them by scanning /proc, and a
// restarted autoscaler adopts the agents a previous one started. An instance's agent uses the
// instance id as its agent id. Terminate signals the instance's process group (SIGTERM, then
// SIGKILL after 10 s).
class LocalProvider final : public Provider {
 public:
  LocalProvider(LocalProviderOptions options, const Clock& clock);

  Result<std::vector<Instance>> List(const std::string& resource_pool) override;
  LaunchResult Launch(const LaunchRequest& request) override;
  Status Terminate(const std::vector<std::string>& ids) override;
  std::vector<Offering> Offerings() const override;

 private:
  struct Found {
    pid_t pid;
    Instance instance;
  };
  std::vector<Found> Scan() const;
  void Reap();

  LocalProviderOptions options_;
  const Clock& clock_;
  std::set<pid_t> children_;                  // started by this process: reaped here
  std::map<std::string, MonoTime> stopping_;  // SIGTERM sent, by instance id
};

}  // namespace det::autoscaler
