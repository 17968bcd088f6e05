#include "autoscaler/local_provider.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "common/process.h"
#include "common/random_seed.h"

namespace det::autoscaler {
namespace {

namespace fs = std::filesystem;

constexpr Duration kKillAfter = std::chrono::seconds(10);
const Offering kLocalOffering{"local", "localhost", false};

std::string NewInstanceId(const std::string& pool) {
  static std::mt19937_64 random{RandomSeed()};
  std::ostringstream id;
  id << "local-" << pool << "-" << std::hex << (random() & 0xffffffffULL);
  return id.str();
}

}  // namespace

Status ReadLocalProviderOptions(const YAML::Node& provider, LocalProviderOptions* options) {
  ConfigReader reader(provider, "provider");
  reader.AllowOtherKeys();
  std::string work_dir = options->work_dir.string();
  reader.Read("agent_binary", &options->agent_binary);
  reader.Read("agent_args", &options->agent_args);
  reader.Read("work_dir", &work_dir);
  options->work_dir = work_dir;
  return reader.Finish();
}

LocalProvider::LocalProvider(LocalProviderOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  if (options_.agent_binary.empty()) options_.agent_binary = SiblingProgram("agent", "det-agent");
  if (options_.work_dir.empty()) options_.work_dir = fs::temp_directory_path() / "det-local";
}

std::vector<LocalProvider::Found> LocalProvider::Scan() const {
  std::vector<Found> found;
  std::set<std::string> seen;
  std::vector<TaggedProcess> processes = FindSessionLeaders("DET_CLUSTER_ID", options_.cluster_id);
  std::sort(processes.begin(), processes.end(),
            [](const TaggedProcess& a, const TaggedProcess& b) { return a.pid < b.pid; });
  for (TaggedProcess& process : processes) {
    std::map<std::string, std::string>& env = process.env;
    // One process per instance: a descendant that made a session of its own is not another.
    if (env["DET_INSTANCE_ID"].empty() || !seen.insert(env["DET_INSTANCE_ID"]).second) continue;
    Instance instance;
    instance.id = env["DET_INSTANCE_ID"];
    instance.resource_pool = env["DET_INSTANCE_POOL"];
    instance.offering = kLocalOffering;
    instance.launched_at =
        WallTime{} + std::chrono::nanoseconds(std::atoll(env["DET_INSTANCE_LAUNCHED"].c_str()));
    instance.state =
        stopping_.contains(instance.id) ? InstanceState::kStopping : InstanceState::kRunning;
    found.push_back({process.pid, std::move(instance)});
  }
  return found;
}

void LocalProvider::Reap() {
  for (auto it = children_.begin(); it != children_.end();) {
    it = waitpid(*it, nullptr, WNOHANG) == 0 ? std::next(it) : children_.erase(it);
  }
}

Result<std::vector<Instance>> LocalProvider::List(const std::string& resource_pool) {
  Reap();
  std::vector<Instance> instances;
  std::set<std::string> alive;
  for (Found& found : Scan()) {
    alive.insert(found.instance.id);
    auto stopping = stopping_.find(found.instance.id);
    if (stopping != stopping_.end() && clock_.Now() - stopping->second > kKillAfter) {
      kill(-found.pid, SIGKILL);
    }
    if (found.instance.resource_pool == resource_pool) {
      instances.push_back(std::move(found.instance));
    }
  }
  std::erase_if(stopping_, [&](const auto& entry) { return !alive.contains(entry.first); });
  return instances;
}

LaunchResult LocalProvider::Launch(const LaunchRequest& request) {
  LaunchResult result;
  std::error_code ec;
  fs::create_directories(options_.work_dir, ec);
  for (int i = 0; i < request.count; ++i) {
    Instance instance{NewInstanceId(request.resource_pool), request.resource_pool,
                      InstanceState::kStarting, kLocalOffering, clock_.WallNow()};
    const fs::path dir = options_.work_dir / instance.id;
    fs::create_directories(dir, ec);
    std::vector<std::string> argv = {options_.agent_binary,
                                     "--master-host",
                                     options_.master_host,
                                     "--master-port",
                                     std::to_string(options_.master_port),
                                     "--agent-id",
                                     instance.id,
                                     "--resource-pool",
                                     request.resource_pool,
                                     "--work-dir",
                                     (dir / "work").string()};
    argv.insert(argv.end(), options_.agent_args.begin(), options_.agent_args.end());
    auto pid =
        SpawnDetached(argv,
                      {{"DET_CLUSTER_ID", options_.cluster_id},
                       {"DET_INSTANCE_ID", instance.id},
                       {"DET_INSTANCE_POOL", request.resource_pool},
                       {"DET_LOCAL_PROVIDER_DIR", options_.work_dir.string()},
                       {"DET_INSTANCE_LAUNCHED", std::to_string(UnixNanos(instance.launched_at))}},
                      (dir / "agent.log").string());
    if (!pid.ok()) {
      result.error = ProviderError{ProviderErrorKind::kInvalid, pid.status().message()};
      break;
    }
    children_.insert(*pid);
    result.launched.push_back(std::move(instance));
  }
  return result;
}

Status LocalProvider::Terminate(const std::vector<std::string>& ids) {
  const std::set<std::string> wanted(ids.begin(), ids.end());
  for (const Found& found : Scan()) {
    if (!wanted.contains(found.instance.id)) continue;
    if (kill(-found.pid, SIGTERM) == 0) stopping_.emplace(found.instance.id, clock_.Now());
  }
  return Status::Ok();
}

std::vector<Offering> LocalProvider::Offerings() const { return {kLocalOffering}; }

}  // namespace det::autoscaler
