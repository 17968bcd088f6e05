#pragma once

// Slurm as a baseline: a private slurmctld and slurmd (and the munged they authenticate through),
// one node of N CPUs, in a folder of their own on loopback ports picked free; stopped by pid and
// removed at the end. Slurm's own defaults otherwise (its scheduler, its batch-job launch), as a
// site gets from Debian's slurm-wlm: what the submit benchmark measures det's submit path against
// in the same run.
//
// Needs root (slurmd runs each job as its submitter) and Debian's slurm-wlm and munge
// (scripts/install-deps.sh installs them without starting their system services).

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/processes.h"
#include "bus/envelope.h"
#include "common/process.h"
#include "common/status.h"

namespace det::bench {

class SlurmCluster {
 public:
  // Starts munged, slurmctld and slurmd with one node of `cpus` CPUs that takes arrays of up to
  // `max_array` tasks, and waits until the node is idle. Unavailable names what is missing (Slurm,
  // root) or which daemon did not come up (and its log).
  static Result<std::unique_ptr<SlurmCluster>> Start(int cpus, int max_array) {
    if (geteuid() != 0) return Unavailable("the Slurm baseline needs root (slurmd runs the jobs)");
    std::unique_ptr<SlurmCluster> slurm(new SlurmCluster());
    for (const char* program : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo"}) {
      if (slurm->Program(program).empty()) {
        return Unavailable(std::string("Slurm is not installed (no ") + program +
                           "; scripts/install-deps.sh installs Debian's slurm-wlm and munge)");
      }
    }
    DET_RETURN_IF_ERROR(slurm->StartDaemons(cpus, max_array));
    return slurm;
  }

  ~SlurmCluster() {
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) Terminate(*it);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // What a client command needs added to its environment.
  std::vector<std::string> ClientEnvironment() const { return {"SLURM_CONF=" + conf_.string()}; }
  // "22.05.8": the last word of what `sbatch --version` says.
  const std::string& version() const { return version_; }
  // `sbatch` with `args`, in the cluster's folder, output to /dev/null: argv to run.
  std::vector<std::string> Sbatch(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {Program("sbatch"), "--chdir=" + dir_.string(), "--output",
                                     "/dev/null"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  // Waits until no job is pending, running or completing, listing them every `poll`; false when
  // some still are after `limit` (or squeue fails).
  bool WaitForEmptyQueue(std::chrono::seconds limit, std::chrono::milliseconds poll) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      auto listed =
          RunForOutput({Program("squeue"), "--noheader", "--format=%i"}, ClientEnvironment());
      if (!listed) return false;
      if (listed->empty()) return true;
      std::this_thread::sleep_for(poll);
    }
    std::fprintf(stderr, "Slurm's jobs did not end within %lld s\n",
                 static_cast<long long>(limit.count()));
    return false;
  }

 private:
  SlurmCluster()
      : dir_(std::filesystem::temp_directory_path() / ("det-bench-slurm-" + bus::RandomId())),
        conf_(dir_ / "slurm.conf") {}

  // `name` on PATH, or in the sbin folders a non-login root shell may lack; "" when absent.
  std::string Program(const std::string& name) const {
    std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
    std::istringstream folders(path + ":/usr/sbin:/sbin:/usr/local/sbin");
    for (std::string folder; std::getline(folders, folder, ':');) {
      if (!folder.empty() && access((folder + "/" + name).c_str(), X_OK) == 0) {
        return folder + "/" + name;
      }
    }
    return "";
  }

  Status StartDaemons(int cpus, int max_array) {
    std::filesystem::create_directories(dir_ / "state");
    std::filesystem::create_directories(dir_ / "spool");
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all);
    DET_RETURN_IF_ERROR(WriteMungeKey());
    pids_.push_back(Spawn({Program("munged"), "--foreground", "--force",
                           "--key-file=" + (dir_ / "munge.key").string(),
                           "--socket=" + (dir_ / "munge.sock").string(),
                           "--pid-file=" + (dir_ / "munged.pid").string(),
                           "--seed-file=" + (dir_ / "munged.seed").string(),
                           "--log-file=" + (dir_ / "munged.log").string()},
                          dir_ / "munged.out"));
    for (int i = 0; i < 100 && !std::filesystem::exists(dir_ / "munge.sock"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!std::filesystem::exists(dir_ / "munge.sock")) {
      return Unavailable("munged did not start: " + Tail(dir_ / "munged.log"));
    }
    WriteConfig(cpus, max_array);
    pids_.push_back(
        Spawn({Program("slurmctld"), "-D", "-i", "-f", conf_.string()}, dir_ / "slurmctld.out"));
    pids_.push_back(Spawn({Program("slurmd"), "-D", "-f", conf_.string()}, dir_ / "slurmd.out"));
    DET_RETURN_IF_ERROR(WaitForIdleNode());
    auto version = RunForOutput({Program("sbatch"), "--version"}, ClientEnvironment());
    std::istringstream words(version ? *version : "");
    for (std::string word; words >> word;) version_ = word;
    return Status::Ok();
  }

  Status WriteMungeKey() {
    std::ifstream random("/dev/urandom", std::ios::binary);
    std::string key(1024, '\0');
    if (!random.read(key.data(), static_cast<std::streamsize>(key.size()))) {
      return Unavailable("cannot read /dev/urandom for munge's key");
    }
    const auto path = dir_ / "munge.key";
    std::ofstream(path, std::ios::binary) << key;
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return Status::Ok();
  }

  void WriteConfig(int cpus, int max_array) const {
    std::string host = HostName();
    host = host.substr(0, host.find('.'));  // the short name, as slurmd matches its node
    const std::string dir = dir_.string();
    std::ofstream(conf_)
        << "ClusterName=bench\nSlurmctldHost=" << host << "\nSlurmUser=root\nSlurmdUser=root\n"
        << "SlurmctldPort=" << FreePort() << "\nSlurmdPort=" << FreePort() << "\n"
        << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << dir << "/munge.sock\n"
        << "StateSaveLocation=" << dir << "/state\nSlurmdSpoolDir=" << dir << "/spool\n"
        << "SlurmctldPidFile=" << dir << "/slurmctld.pid\nSlurmdPidFile=" << dir << "/slurmd.pid\n"
        << "SlurmctldLogFile=" << dir << "/slurmctld.log\nSlurmdLogFile=" << dir
        << "/slurmd.log\n"
        // No cgroups: the jobs are `true`, and a test machine may have no cgroup to give.
        << "ProctrackType=proctrack/pgid\nTaskPlugin=task/none\n"
        << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
        << "AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n"
        << "MpiDefault=none\nReturnToService=2\n"
        // The node's CPUs as configured, not as counted (one node of `cpus` slots, as det's agent).
        << "SlurmdParameters=config_overrides\n"
        << "MaxJobCount=" << 10 * max_array + 10000 << "\nMaxArraySize=" << max_array + 1 << "\n"
        << "NodeName=" << host << " NodeAddr=127.0.0.1 CPUs=" << cpus << " State=UNKNOWN\n"
        << "PartitionName=bench Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  }

  Status WaitForIdleNode() const {
    for (int i = 0; i < 300; ++i) {
      auto state = RunForOutput({Program("sinfo"), "--noheader", "--format=%t"},
                                ClientEnvironment(), /*quiet=*/true);
      if (state && state->rfind("idle", 0) == 0) return Status::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return Unavailable("Slurm's node did not come up within 30 s; slurmctld said: " +
                       Tail(dir_ / "slurmctld.log") +
                       "; slurmd said: " + Tail(dir_ / "slurmd.log"));
  }

  // The last lines of a daemon's log (the folder goes with the cluster), on one line.
  static std::string Tail(const std::filesystem::path& log) {
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::string tail;
    for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i) {
      tail += (tail.empty() ? "" : " | ") + lines[i];
    }
    return tail.empty() ? "(nothing)" : tail;
  }

  std::filesystem::path dir_;
  std::filesystem::path conf_;
  std::string version_;
  std::vector<pid_t> pids_;
};

}  // namespace det::bench
