#include "agent/workload_runner.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>

#include "agent/shim/workload_shim.h"
#include "agent/workload_record.h"
#include "common/files.h"
#include "common/process.h"

namespace det::agent {
namespace {

namespace fs = std::filesystem;

constexpr auto kSweepInterval = std::chrono::seconds(1);
constexpr size_t kMinSpareFolders = 16;  // else twice the slots: one running, one just ended

int OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

void ClosePidFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

WorkloadRunner::WorkloadRunner(Options options, const Clock& clock, LogShipper& shipper,
                               Runtimes runtimes)
    : options_(std::move(options)),
      clock_(clock),
      shipper_(shipper),
      folders_(options_.work_dir, std::max<size_t>(kMinSpareFolders, 2 * options_.slots.size())),
      output_(clock, shipper),
      runtimes_(runtimes) {
  folders_.StockUp();
}

WorkloadRunner::~WorkloadRunner() {
  for (auto& [id, w] : workloads_) {
    CloseStreams(w);
    ClosePidFd(w.pidfd);
  }
}

WorkloadRuntime& WorkloadRunner::RuntimeFor(const bus::WorkloadStart& start) const {
  if (runtimes_.containers && !start.container.empty()) return *runtimes_.containers;
  return *runtimes_.processes;
}

WorkloadRuntime& WorkloadRunner::RuntimeOf(const std::string& dir) const {
  if (runtimes_.containers && runtimes_.containers->Owns(dir)) return *runtimes_.containers;
  return *runtimes_.processes;
}

Result<pid_t> WorkloadRunner::SpawnWorkload(const bus::WorkloadStart& given, Workload& w) {
  std::optional<bus::WorkloadStart> defaulted;  // a copy only where the account is filled in
  if (!given.run_as && options_.default_account) {
    defaulted = given;
    defaulted->run_as = options_.default_account;
  }
  const bus::WorkloadStart& start = defaulted ? *defaulted : given;
  if (auto checkpoints = start.env.find("DET_CHECKPOINT_DIR");
      start.run_as && checkpoints != start.env.end()) {
    DET_RETURN_IF_ERROR(OpenSharedFolder(checkpoints->second));
  }
  return w.runtime->Spawn(start, w.dir);
}

void WorkloadRunner::ReportPhase(const std::string& allocation_id, Workload& w, Reports* out) {
  if (!w.runtime->ReportsPhases()) return;
  const std::string phase = w.runtime->Phase(w.dir);
  if (phase.empty() || phase == w.phase) return;
  // PULLING → STARTING → RUNNING; the master hears each step once, in order.
  static constexpr std::string_view kOrder[] = {bus::kWorkloadPulling, bus::kWorkloadStarting,
                                                bus::kWorkloadRunning};
  auto rank = [](std::string_view p) {
    return static_cast<int>(std::find(std::begin(kOrder), std::end(kOrder), p) - kOrder);
  };
  if (rank(phase) == 3) return;  // not a phase
  for (int step = rank(w.phase) + 1; step <= rank(phase); ++step) {
    out->states.push_back({allocation_id, w.task_id, std::string(kOrder[step]), 0, "", ""});
  }
  w.phase = phase;
}

bool WorkloadRunner::Readopt(const std::string& allocation_id, Workload& w) {
  const std::optional<pid_t> pid = w.runtime->Readopt(allocation_id, w.dir);
  if (!pid) return false;
  w.pid = *pid;
  w.own_child = true;
  SaveState(allocation_id, w);
  return true;
}

Status WorkloadRunner::Follow(const std::string& allocation_id, Workload& w, int64_t out_offset,
                              int64_t err_offset) {
  DET_RETURN_IF_ERROR(output_.Follow(allocation_id, w.dir, w.out, out_offset));
  return output_.Follow(allocation_id, w.dir, w.err, err_offset);
}

bool WorkloadRunner::Drain(const std::string& allocation_id, Workload& w, Stream& stream,
                           bool final) {
  return output_.Drain({allocation_id, w.task_id}, stream, final);
}

void WorkloadRunner::CloseStreams(Workload& w) {
  output_.Close(w.out);
  output_.Close(w.err);
}

void WorkloadRunner::Start(const bus::WorkloadStart& start, Reports* out) {
  if (workloads_.count(start.allocation_id)) return;  // a repeated start: already running
  if (!WorkloadFolders::IsWorkloadFolderName(start.allocation_id)) {
    out->states.push_back({start.allocation_id, start.task_id,
                           std::string(bus::kWorkloadTerminated), -1,
                           std::string(bus::kFailureStartFailed),
                           "allocation id is not a plain name: " + start.allocation_id});
    return;
  }
  auto report = [&](std::string_view state, int32_t code = 0, std::string_view failure = {},
                    std::string message = {}) {
    out->states.push_back({start.allocation_id, start.task_id, std::string(state), code,
                           std::string(failure), std::move(message)});
  };
  std::error_code ec;
  if (fs::file_size(folders_.PathOf(start.allocation_id) + "/" + kStateFile, ec) > 0 && !ec) {
    return;  // started before, already ended: nothing new
  }
  report(bus::kWorkloadPulling);  // preparing what it runs in: its folder and output files
  auto dir = folders_.Prepare(start.allocation_id);
  if (!dir.ok()) {
    report(bus::kWorkloadTerminated, -1, bus::kFailureStartFailed, dir.status().message());
    return;
  }
  Workload& w = workloads_[start.allocation_id];
  w.task_id = start.task_id;
  w.dir = *dir;
  w.runtime = &RuntimeFor(start);
  const bool phased = w.runtime->ReportsPhases();
  // Output is watched before the workload can write any.
  Status followed = Follow(start.allocation_id, w, 0, 0);
  if (!phased) report(bus::kWorkloadStarting);  // else as the runtime moves it on
  auto pid = followed.ok() ? SpawnWorkload(start, w) : Result<pid_t>(followed);
  if (!pid.ok()) {
    CloseStreams(w);
    workloads_.erase(start.allocation_id);
    report(bus::kWorkloadTerminated, -1, bus::kFailureStartFailed, pid.status().message());
    return;
  }
  w.pid = *pid;
  w.own_child = true;
  w.pidfd = OpenPidFd(w.pid);
  SaveState(start.allocation_id, w);
  spdlog::info("started {} (task {}) as pid {}{}", start.allocation_id, start.task_id, *pid,
               w.runtime->Where(start.allocation_id));
  if (phased) {
    w.phase = bus::kWorkloadPulling;
  } else {
    report(bus::kWorkloadRunning);
  }
}

void WorkloadRunner::Recover(Reports* out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(options_.work_dir, ec)) {
    const std::string allocation_id = entry.path().filename().string();
    if (!WorkloadFolders::IsWorkloadFolderName(allocation_id)) continue;
    const std::optional<WorkloadRecord> record = ReadWorkloadRecord(entry.path().string());
    if (!record) continue;
    Workload& w = workloads_[allocation_id];
    w.task_id = record->task_id;
    w.pid = record->pid;
    w.kill_requested = record->kill_requested;
    w.dir = entry.path().string();
    w.runtime = &RuntimeOf(w.dir);
    w.phase = w.runtime->ReportsPhases() ? w.runtime->Phase(w.dir) : "";
    Status followed = Follow(allocation_id, w, record->stdout_offset, record->stderr_offset);
    // Only a process that is this workload's shim is adopted (or ever signalled): the pid may
    // have been reused since.
    bool alive = w.pid > 1 && IsShimOf(w.pid, w.dir);
    if (!alive) w.pid = -1;
    if (!alive && followed.ok() && Readopt(allocation_id, w)) alive = true;
    w.pidfd = alive ? OpenPidFd(w.pid) : -1;
    if (alive && w.kill_requested) w.kill_deadline = clock_.Now();  // the stop was under way
    spdlog::info("adopting {} (task {}): {}", allocation_id, w.task_id,
                 alive ? "still running" : "ended while the agent was away");
    if (!followed.ok() || !alive) {
      End(allocation_id, w, std::nullopt, out);
      if (Complete(allocation_id, w, out)) workloads_.erase(allocation_id);
      continue;
    }
    Drain(allocation_id, w, w.out, false);
    Drain(allocation_id, w, w.err, false);
  }
  std::set<std::string> known;
  for (const auto& [id, w] : workloads_) known.insert(id);
  for (WorkloadRuntime* runtime : {runtimes_.processes, runtimes_.containers}) {
    if (runtime) runtime->Sweep(known);
  }
}

void WorkloadRunner::SaveState(const std::string& allocation_id, const Workload& w) const {
  auto committed = [&](const Stream& s) {
    return shipper_.OldestUnconfirmedOffset(allocation_id, s.stdtype)
        .value_or(s.offset - static_cast<int64_t>(s.partial.size()));
  };
  const WorkloadRecord record{allocation_id,    w.task_id,        w.pid,
                              w.kill_requested, committed(w.out), committed(w.err)};
  if (Status saved = WriteWorkloadRecord(w.dir, record); !saved.ok()) {
    spdlog::warn("{}: {}", allocation_id, saved.message());
  }
}

void WorkloadRunner::OnLogsConfirmed(const std::string& allocation_id) {
  if (auto it = workloads_.find(allocation_id); it != workloads_.end()) {
    SaveState(allocation_id, it->second);
  }
}

void WorkloadRunner::Remove(const std::string& allocation_id) {
  if (workloads_.count(allocation_id)) return;  // still running: not for removal
  if (!WorkloadFolders::IsWorkloadFolderName(allocation_id)) return;
  shipper_.Forget(allocation_id);
  folders_.Retire(allocation_id);
}

void WorkloadRunner::Kill(const bus::WorkloadKill& request) {
  auto it = workloads_.find(request.allocation_id);
  if (it == workloads_.end() || it->second.kill_requested) return;
  Workload& w = it->second;
  w.kill_requested = true;
  const int64_t grace_ms = std::clamp<int64_t>(request.grace_ms, 0, 3600 * 1000);
  const Duration grace = std::chrono::milliseconds(grace_ms);
  w.kill_deadline = clock_.Now() + grace + w.runtime->PrepareStop(w.dir, grace);
  SaveState(request.allocation_id, w);
  if (w.pid > 1) kill(-w.pid, SIGTERM);
  spdlog::info("stopping {}: SIGTERM, SIGKILL in {} ms", request.allocation_id, request.grace_ms);
}

void WorkloadRunner::AppendPollItems(std::vector<zmq::pollitem_t>* items) {
  poll_first_ = items->size();
  items->push_back({nullptr, output_.fd(), ZMQ_POLLIN, 0});
  polled_.clear();
  for (const auto& [id, w] : workloads_) {
    if (w.pidfd < 0) continue;
    items->push_back({nullptr, w.pidfd, ZMQ_POLLIN, 0});
    polled_.push_back(id);
  }
}

bool WorkloadRunner::Exited(Workload& w, bool pidfd_readable, int* status) {
  if (w.own_child) return waitpid(w.pid, status, WNOHANG) == w.pid;
  // An adopted shim is not ours to reap: its pidfd turning readable is its exit (it may linger as
  // a zombie under a parent that does not reap).
  if (pidfd_readable) return true;
  return (kill(w.pid, 0) != 0 && errno == ESRCH) || IsZombie(w.pid);
}

void WorkloadRunner::End(const std::string& allocation_id, Workload& w,
                         std::optional<int> wait_status, Reports* out) {
  if (w.pid > 1) kill(-w.pid, SIGKILL);  // what the workload left behind
  ReportPhase(allocation_id, w, out);    // the steps it took since the last sweep come first
  w.runtime->CleanUp(allocation_id);
  ClosePidFd(w.pidfd);
  w.pid = -1;  // reaped (or not ours): never signalled again
  w.kill_deadline.reset();
  w.ended = true;
  w.wait_status = wait_status;
}

bool WorkloadRunner::Complete(const std::string& allocation_id, Workload& w, Reports* out) {
  const bool out_read = Drain(allocation_id, w, w.out, /*final=*/true);
  const bool err_read = Drain(allocation_id, w, w.err, /*final=*/true);
  if (!out_read || !err_read) return false;
  CloseStreams(w);
  for (auto& batch : shipper_.TakeAll(allocation_id, clock_.Now())) {
    out->logs.push_back(std::move(batch));
  }
  const std::optional<int>& wait_status = w.wait_status;
  std::string exit_status = ReadFileText(w.dir + "/" + kExitStatusFile).value_or("");
  if (exit_status.empty() && wait_status && WIFSIGNALED(*wait_status)) {
    exit_status = "signal " + std::to_string(WTERMSIG(*wait_status));  // the shim itself was killed
  }
  bus::WorkloadState state =
      WorkloadEnding(exit_status, w.runtime->Ending(w.dir), w.kill_requested);
  state.allocation_id = allocation_id;
  state.task_id = w.task_id;
  spdlog::info("{} ended: exit code {}{}", allocation_id, state.exit_code,
               state.failure_type.empty() ? "" : " (" + state.failure_type + ")");
  out->states.push_back(std::move(state));
  return true;
}

void WorkloadRunner::Tick(const std::vector<zmq::pollitem_t>& items, Reports* out) {
  const MonoTime now = clock_.Now();
  if (poll_first_ < items.size() && (items[poll_first_].revents & ZMQ_POLLIN)) {
    output_.ReadEvents([&](const std::string& allocation_id, bool is_stderr) {
      auto w = workloads_.find(allocation_id);
      if (w != workloads_.end()) {
        Drain(w->first, w->second, is_stderr ? w->second.err : w->second.out, false);
      }
    });
  }
  std::vector<std::pair<std::string, bool>> candidates;  // (allocation, pidfd readable)
  for (size_t i = 0; i < polled_.size() && poll_first_ + 1 + i < items.size(); ++i) {
    if (items[poll_first_ + 1 + i].revents & ZMQ_POLLIN) candidates.emplace_back(polled_[i], true);
  }
  if (now >= next_sweep_) {  // processes without a pidfd, and stops that are overdue
    next_sweep_ = now + kSweepInterval;
    for (auto& [id, w] : workloads_) {
      if (w.ended) continue;
      ReportPhase(id, w, out);
      if (w.pidfd < 0) candidates.emplace_back(id, false);
      if (w.kill_deadline && now >= *w.kill_deadline) {
        if (w.pid > 1) kill(-w.pid, SIGKILL);
        w.kill_deadline.reset();
      }
    }
  }
  for (const auto& [id, pidfd_readable] : candidates) {
    auto it = workloads_.find(id);
    int status = 0;
    if (it == workloads_.end() || it->second.ended ||
        !Exited(it->second, pidfd_readable, &status)) {
      continue;
    }
    End(id, it->second, it->second.own_child ? std::optional<int>(status) : std::nullopt, out);
  }
  ReadOn(out);
  for (auto& batch : shipper_.TakeDue(now)) out->logs.push_back(std::move(batch));
}

void WorkloadRunner::ReadOn(Reports* out) {
  for (auto it = workloads_.begin(); it != workloads_.end();) {
    Workload& w = it->second;
    if (w.ended && Complete(it->first, w, out)) {
      it = workloads_.erase(it);
      continue;
    }
    if (!w.ended && w.out.behind) Drain(it->first, w, w.out, false);
    if (!w.ended && w.err.behind) Drain(it->first, w, w.err, false);
    ++it;
  }
}

std::vector<bus::WorkloadState> WorkloadRunner::States() const {
  std::vector<bus::WorkloadState> states;
  for (const auto& [id, w] : workloads_) {
    const std::string state = w.runtime->ReportsPhases() && !w.phase.empty()
                                  ? w.phase
                                  : std::string(bus::kWorkloadRunning);
    states.push_back({id, w.task_id, state, 0, "", ""});
  }
  return states;
}

}  // namespace det::agent
