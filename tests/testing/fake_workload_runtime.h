#pragma once

// A scriptable WorkloadRuntime for the runner's unit tests (agent/workload_runtime.h): each spawn
// forks a real child that leads its own process group in the workload's folder, writes the
// scripted output to stdout.log, records its end in exit_status as the shim would ("exit N") and
// exits, or waits for a signal when told to. It records every call, and its phases, endings and
// readoptions are what the test sets.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/shim/workload_shim.h"
#include "agent/workload_runtime.h"

namespace det::testing {

class FakeWorkloadRuntime final : public agent::WorkloadRuntime {
 public:
  // What a spawned workload does: writes `output` to stdout.log, then exits with `exit_code`
  // (writing "exit N" to exit_status first), or, when `wait_for_signal`, waits until a signal
  // ends it (ignoring SIGTERM when `ignore_sigterm`).
  struct Script {
    std::string output;
    int exit_code = 0;
    bool wait_for_signal = false;
    bool ignore_sigterm = false;
  };

  explicit FakeWorkloadRuntime(bool reports_phases = false) : reports_phases_(reports_phases) {}
  ~FakeWorkloadRuntime() override {
    for (pid_t group : waiting_) kill(-group, SIGKILL);
  }

  Result<pid_t> Spawn(const bus::WorkloadStart& start, const std::string& dir) override {
    spawned.push_back(start.allocation_id);
    if (refuse_spawn) return Internal("the fake runtime refused to spawn");
    return Fork(dir, scripts[start.allocation_id]);
  }
  bool ReportsPhases() const override { return reports_phases_; }
  std::string Phase(const std::string& dir) const override {
    auto it = phases.find(dir);
    return it == phases.end() ? "" : it->second;
  }
  Duration PrepareStop(const std::string& dir, Duration grace) override {
    stops.push_back({dir, grace});
    return stop_margin;
  }
  void CleanUp(const std::string& allocation_id) override { cleaned_up.push_back(allocation_id); }
  std::string Ending(const std::string& dir) const override {
    auto it = endings.find(dir);
    return it == endings.end() ? "" : it->second;
  }
  bool Owns(const std::string& dir) const override { return owned.count(dir) > 0; }
  std::optional<pid_t> Readopt(const std::string& allocation_id, const std::string& dir) override {
    readopted.push_back(allocation_id);
    if (!readopt_with) return std::nullopt;
    Result<pid_t> pid = Fork(dir, *readopt_with);
    if (!pid.ok()) return std::nullopt;
    return *pid;
  }
  void Sweep(const std::set<std::string>& known) override { swept.push_back(known); }
  std::string Where(const std::string&) const override { return ""; }

  // Set by the test.
  std::map<std::string, Script> scripts;       // by allocation id
  std::map<std::string, std::string> phases;   // by folder
  std::map<std::string, std::string> endings;  // by folder
  std::set<std::string> owned;                 // folders this runtime owns
  std::optional<Script> readopt_with;          // what a readopted workload does; none: no readopt
  Duration stop_margin = Duration::zero();
  bool refuse_spawn = false;

  // Recorded.
  struct Stop {
    std::string dir;
    Duration grace;
  };
  std::vector<std::string> spawned;  // allocation ids
  std::vector<Stop> stops;
  std::vector<std::string> cleaned_up;
  std::vector<std::string> readopted;
  std::vector<std::set<std::string>> swept;

 private:
  // The child is set up (its group, its signals) before this returns, as a shim server answers
  // only once the clone leads its group.
  Result<pid_t> Fork(const std::string& dir, const Script& script) {
    const std::string out = dir + "/" + agent::kStdoutFile;
    const std::string status = dir + "/" + agent::kExitStatusFile;
    const std::string ended = "exit " + std::to_string(script.exit_code);
    int ready[2];
    if (pipe(ready) != 0) return Internal("pipe failed");
    const pid_t pid = fork();
    if (pid < 0) return Internal("fork failed");
    if (pid > 0) {
      close(ready[1]);
      char byte = 0;
      (void)!read(ready[0], &byte, 1);
      close(ready[0]);
      if (script.wait_for_signal) waiting_.push_back(pid);
      return pid;
    }
    // The child: async-signal-safe calls only.
    setpgid(0, 0);
    if (script.ignore_sigterm) signal(SIGTERM, SIG_IGN);
    (void)!write(ready[1], "r", 1);
    const int fd = open(out.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0) {
      (void)!write(fd, script.output.data(), script.output.size());
      close(fd);
    }
    if (script.wait_for_signal) {
      for (;;) pause();
    }
    const int record = open(status.c_str(), O_WRONLY | O_TRUNC | O_CREAT, 0644);
    if (record >= 0) {
      (void)!write(record, ended.data(), ended.size());
      close(record);
    }
    _exit(script.exit_code);
  }

  std::vector<pid_t> waiting_;  // children that wait for a signal: killed at the end
  bool reports_phases_;
};

}  // namespace det::testing
