#include "agent/workload_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agent/docker_client.h"
#include "agent/docker_workload.h"
#include "agent/workload_folders.h"
#include "agent/workload_shim.h"
#include "common/environment.h"
#include "common/process.h"
#include "common/strings.h"

extern char** environ;

namespace det::agent {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLineBytes = 64 * 1024;  // longer lines are split
constexpr auto kSweepInterval = std::chrono::seconds(1);
constexpr size_t kMinSpareFolders = 16;  // else twice the slots: one running, one just ended
// A container's stop is the engine's (its grace, then SIGKILL): the pump gets this long beyond
// the grace before the agent kills the pump, and then removes the container itself.
constexpr auto kContainerStopMargin = std::chrono::seconds(30);

int OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// A single-string entrypoint runs through /bin/sh -c unless it is one plain word (e.g. "true"),
// which is executed directly: the same result, without a shell.
bool NeedsShell(const std::string& command) {
  return command.find_first_of(" \t\n|&;<>()$`\\\"'*?[]#~=%{}!") != std::string::npos;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The ending the shim wrote ("exit N", "signal N", "start-failed why") or, first, the one a
// container's pump wrote ("oom N", "start-failed why", "lost why"), as a state.
bus::WorkloadState Termination(const std::string& exit_status, const std::string& container_end,
                               bool kill_requested) {
  bus::WorkloadState state;
  state.state = bus::kWorkloadTerminated;
  std::istringstream in(container_end.empty() ? exit_status : container_end);
  std::string kind;
  int number = -1;
  in >> kind;
  if (kind == "start-failed" || kind == "lost") {
    state.exit_code = -1;
    state.failure_type = kind == "lost" ? bus::kFailureTaskError : bus::kFailureStartFailed;
    std::getline(in, state.message);
    state.message = (kind == "lost" ? "lost:" : "cannot start:") + state.message;
    return state;
  }
  in >> number;
  if (kind == "oom" && number >= 0) {
    state.exit_code = number;
    state.failure_type = kill_requested ? bus::kFailureKilled : bus::kFailureTaskError;
    state.message = "killed for lack of memory (out of memory in its container)";
    return state;
  }
  if (kind == "exit" && number >= 0) {
    state.exit_code = number;
    if (number != 0) state.message = "exited with code " + std::to_string(number);
  } else if (kind == "signal" && number > 0) {
    state.exit_code = 128 + number;
    state.message = std::string("killed by signal ") + strsignal(number);
  } else {
    state.exit_code = -1;
    state.message = "exit status unknown (the workload's supervisor was killed)";
  }
  if (state.exit_code != 0) {
    state.failure_type = kill_requested ? bus::kFailureKilled : bus::kFailureTaskError;
  }
  return state;
}

bool IsZombie(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

std::string FileText(const std::string& dir, const char* name) {
  std::string text = ReadFile(fs::path(dir) / name);
  text.erase(text.find_last_not_of(" \t\r\n") + 1);
  return text;
}

// Whether `pid` is the shim of the workload in `dir` (and not a reused pid).
bool IsShimOf(pid_t pid, const std::string& dir) {
  std::string cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  return cmdline.find(std::string(" ") + kWorkloadShimArg + " " + dir + " ") != std::string::npos;
}

}  // namespace

WorkloadRunner::WorkloadRunner(Options options, const Clock& clock, LogShipper& shipper)
    : options_(std::move(options)),
      clock_(clock),
      shipper_(shipper),
      folders_(options_.work_dir, std::max<size_t>(kMinSpareFolders, 2 * options_.slots.size())) {
  inotify_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  folders_.StockUp();
  std::error_code ec;
  const fs::path here = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (options_.shim_program.empty()) options_.shim_program = (here / "det-workload-shim").string();
  if (options_.pump_program.empty()) options_.pump_program = (here / "det-docker-pump").string();
}

WorkloadRunner::~WorkloadRunner() {
  for (auto& [id, w] : workloads_) {
    CloseStream(w.out);
    CloseStream(w.err);
    CloseFd(w.pidfd);
  }
  CloseFd(inotify_);
}

std::vector<std::string> WorkloadRunner::Environment(const bus::WorkloadStart& start, bool inherit,
                                                     const std::string& info_dir) const {
  // The agent's basics (not its credentials, nor the local provider's tags), then the task's
  // variables, then det's own, which the task cannot override.
  std::map<std::string, std::string> env;
  for (char** e = inherit ? environ : nullptr; e && *e; ++e) {
    std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos && WorkloadInherits(entry.substr(0, eq))) {
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  for (const auto& [key, value] : start.env) env[key] = value;
  std::vector<std::string> gpus;
  for (const std::string& slot_id : start.slot_ids) {
    for (const bus::SlotInfo& slot : options_.slots) {
      if (slot.id == slot_id && slot.type == "cuda") {
        gpus.push_back(slot.uuid.empty() ? slot.id : slot.uuid);
      }
    }
  }
  env["DET_MASTER"] = start.master_address;
  env["DET_TASK_ID"] = start.task_id;
  env["DET_ALLOCATION_ID"] = start.allocation_id;
  env["DET_AGENT_ID"] = options_.agent_id;
  env["DET_SLOT_IDS"] = Join(start.slot_ids, ",");
  env["DET_SESSION_TOKEN"] = start.session_token;
  if (!info_dir.empty()) env["DET_INFO_DIR"] = info_dir;
  // A container sees only its own GPUs, numbered from 0 (the engine's device request).
  if (inherit) env["CUDA_VISIBLE_DEVICES"] = Join(gpus, ",");
  std::vector<std::string> entries;
  entries.reserve(env.size());
  for (const auto& [key, value] : env) entries.push_back(key + "=" + value);
  return entries;
}

bool WorkloadRunner::InContainer(const bus::WorkloadStart& start) const {
  return options_.container_runtime == "docker" && !start.container.empty();
}

Result<pid_t> WorkloadRunner::SpawnWorkload(const bus::WorkloadStart& start, Workload& w) const {
  std::vector<std::string> argv = start.entrypoint;
  if (start.entrypoint.size() == 1 && NeedsShell(start.entrypoint[0])) {
    argv = {"/bin/sh", "-c", start.entrypoint[0]};
  }
  // A run that wants Determined's info files (DET_TASK_TYPE) gets a folder of its own for them,
  // shown to it at /run/determined/info: by the shim's mount namespace, or a container's bind.
  const bool wants_info = start.env.contains("DET_TASK_TYPE");
  if (!w.in_container) {
    std::string info_dir;
    if (wants_info) {
      info_dir = w.dir + "/" + kRunInfoFolder;
      std::error_code made;
      std::filesystem::create_directories(info_dir, made);
      if (made) return Internal("cannot make " + info_dir + ": " + made.message());
    }
    return Spawn(argv, Environment(start, true, info_dir), w.dir);
  }
  std::vector<bus::SlotInfo> slots;
  for (const bus::SlotInfo& slot : options_.slots) {
    if (std::find(start.slot_ids.begin(), start.slot_ids.end(), slot.id) != start.slot_ids.end()) {
      slots.push_back(slot);
    }
  }
  DockerWorkload container;
  container.socket = options_.docker_socket;
  container.name = ContainerName(start.allocation_id);
  container.force_pull = start.container.force_pull;
  container.registry_auth = start.container.registry_auth_json;
  const std::string inside = w.dir + "/" + kContainerFolder;
  std::error_code made;
  std::filesystem::create_directories(inside, made);
  if (made) return Internal("cannot make " + inside + ": " + made.message());
  bus::WorkloadStart with_info = start;
  if (wants_info) {
    const std::string info_dir = inside + "/" + kRunInfoFolder;
    std::filesystem::create_directories(info_dir, made);
    if (made) return Internal("cannot make " + info_dir + ": " + made.message());
    with_info.container.binds.push_back(info_dir + ":" + kRunInfoMount);
  }
  container.create =
      ContainerCreateBody({&with_info, options_.agent_id, inside, argv,
                           Environment(start, false, wants_info ? kRunInfoMount : ""), slots,
                           options_.docker_network_mode});
  container.image = container.create.value("Image", "");
  const std::string spec_path = w.dir + "/" + kContainerSpecFile;
  const std::string spec = container.ToJson().dump();
  const int fd = open(spec_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                      0600);  // 0600: it may hold registry credentials
  const bool written =
      fd >= 0 && write(fd, spec.data(), spec.size()) == static_cast<ssize_t>(spec.size());
  if (fd >= 0) close(fd);
  if (!written) return Internal("cannot write " + spec_path + ": " + std::strerror(errno));
  return SpawnPump(w.dir);
}

Result<pid_t> WorkloadRunner::SpawnPump(const std::string& dir) const {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  return Spawn({options_.pump_program, dir}, env, dir);
}

Result<pid_t> WorkloadRunner::Spawn(const std::vector<std::string>& workload_argv,
                                    const std::vector<std::string>& env,
                                    const std::string& dir) const {
  std::vector<std::string> argv = {options_.shim_program, kWorkloadShimArg, dir};
  argv.insert(argv.end(), workload_argv.begin(), workload_argv.end());
  const std::string out = dir + "/" + kStdoutFile, err = dir + "/" + kStderrFile;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  return SpawnPrepared(argv, env, actions, attr);
}

Status WorkloadRunner::Follow(const std::string& allocation_id, Workload& w, int64_t out_offset,
                              int64_t err_offset) {
  for (auto [stream, offset] : {std::pair{&w.out, out_offset}, std::pair{&w.err, err_offset}}) {
    const std::string path = w.dir + "/" + stream->stdtype + ".log";
    stream->fd = open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
    if (stream->fd < 0) return Internal("cannot read " + path + ": " + std::strerror(errno));
    lseek(stream->fd, offset, SEEK_SET);
    stream->offset = offset;
    stream->watch = inotify_add_watch(inotify_, path.c_str(), IN_MODIFY);
    if (stream->watch >= 0) watches_[stream->watch] = {allocation_id, stream == &w.err};
  }
  return Status::Ok();
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
  w.in_container = InContainer(start);
  // Output is watched before the workload can write any.
  Status followed = Follow(start.allocation_id, w, 0, 0);
  if (!w.in_container) report(bus::kWorkloadStarting);  // else as the pump moves on
  auto pid = followed.ok() ? SpawnWorkload(start, w) : Result<pid_t>(followed);
  if (!pid.ok()) {
    CloseStream(w.out);
    CloseStream(w.err);
    workloads_.erase(start.allocation_id);
    report(bus::kWorkloadTerminated, -1, bus::kFailureStartFailed, pid.status().message());
    return;
  }
  w.pid = *pid;
  w.own_child = true;
  w.pidfd = OpenPidFd(w.pid);
  SaveState(start.allocation_id, w);
  spdlog::info("started {} (task {}) as pid {}{}", start.allocation_id, start.task_id, *pid,
               w.in_container ? " in container " + ContainerName(start.allocation_id) : "");
  if (w.in_container) {
    w.phase = bus::kWorkloadPulling;
  } else {
    report(bus::kWorkloadRunning);
  }
}

void WorkloadRunner::ReportPhase(const std::string& allocation_id, Workload& w, Reports* out) {
  if (!w.in_container) return;
  const std::string phase = FileText(w.dir, kContainerPhaseFile);
  if (phase.empty() || phase == w.phase) return;
  // The pump goes PULLING → STARTING → RUNNING; the master hears each step once, in order.
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

void WorkloadRunner::Recover(Reports* out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(options_.work_dir, ec)) {
    const std::string allocation_id = entry.path().filename().string();
    if (!WorkloadFolders::IsWorkloadFolderName(allocation_id)) continue;
    auto state = nlohmann::json::parse(ReadFile(entry.path() / kStateFile), nullptr, false);
    if (!state.is_object()) continue;
    Workload& w = workloads_[allocation_id];
    int64_t out_offset = 0, err_offset = 0;
    try {
      w.task_id = state.value("task_id", "");
      w.pid = state.value("pid", -1);
      w.kill_requested = state.value("kill_requested", false);
      const auto offsets = state.value("offsets", nlohmann::json::object());
      out_offset = std::max<int64_t>(0, offsets.value("stdout", int64_t{0}));
      err_offset = std::max<int64_t>(0, offsets.value("stderr", int64_t{0}));
    } catch (const nlohmann::json::exception& e) {
      spdlog::warn("{}: unreadable {}: {}", allocation_id, kStateFile, e.what());
      w.pid = -1;
    }
    w.dir = entry.path().string();
    w.in_container = fs::exists(w.dir + "/" + kContainerSpecFile, ec);
    w.phase = FileText(w.dir, kContainerPhaseFile);
    Status followed = Follow(allocation_id, w, out_offset, err_offset);
    // Only a process that is this workload's shim is adopted (or ever signalled): the pid may
    // have been reused since.
    bool alive = w.pid > 1 && IsShimOf(w.pid, w.dir);
    if (!alive) w.pid = -1;
    if (!alive && followed.ok() && RestartPump(allocation_id, w)) alive = true;
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
  if (options_.container_runtime == "docker") RemoveOrphanContainers();
}

bool WorkloadRunner::RestartPump(const std::string& allocation_id, Workload& w) {
  // A container outlives its pump (the agent's service may have taken the pump with it): a new
  // pump adopts it, unless the old one recorded the end.
  if (!w.in_container || !FileText(w.dir, kExitStatusFile).empty() ||
      !FileText(w.dir, kContainerEndFile).empty()) {
    return false;
  }
  Result<pid_t> pid = SpawnPump(w.dir);
  if (!pid.ok()) {
    spdlog::warn("{}: cannot start a pump for its container: {}", allocation_id,
                 pid.status().message());
    return false;
  }
  w.pid = *pid;
  w.own_child = true;
  SaveState(allocation_id, w);
  spdlog::info("{}: its pump had gone; a new one adopts container {}", allocation_id,
               ContainerName(allocation_id));
  return true;
}

void WorkloadRunner::RemoveOrphanContainers() {
  DockerClient docker(options_.docker_socket);
  Result<std::vector<ContainerState>> ours = docker.List(kAgentIdLabel, options_.agent_id);
  if (!ours.ok()) {
    spdlog::warn("cannot list this agent's containers: {}", ours.status().message());
    return;
  }
  for (const ContainerState& container : *ours) {
    auto label = container.labels.find(kAllocationIdLabel);
    if (label != container.labels.end() && workloads_.count(label->second)) continue;
    spdlog::info("removing container {}: no workload of this agent runs in it", container.id);
    (void)docker.Remove(container.id);
  }
}

void WorkloadRunner::RemoveContainer(const std::string& allocation_id) const {
  DockerClient docker(options_.docker_socket);
  if (Status removed = docker.Remove(ContainerName(allocation_id)); !removed.ok()) {
    spdlog::warn("{}: {}", allocation_id, removed.message());
  }
}

void WorkloadRunner::SaveState(const std::string& allocation_id, const Workload& w) const {
  auto committed = [&](const Stream& s) {
    return shipper_.OldestUnconfirmedOffset(allocation_id, s.stdtype)
        .value_or(s.offset - static_cast<int64_t>(s.partial.size()));
  };
  nlohmann::json state = {
      {"allocation_id", allocation_id},
      {"task_id", w.task_id},
      {"pid", w.pid},
      {"kill_requested", w.kill_requested},
      {"offsets", {{"stdout", committed(w.out)}, {"stderr", committed(w.err)}}}};
  if (Status saved = WorkloadFolders::WriteInPlace(w.dir + "/" + kStateFile, state.dump());
      !saved.ok()) {
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
  w.kill_deadline = clock_.Now() + std::chrono::milliseconds(grace_ms);
  if (w.in_container) {  // the pump asks the engine to stop it with this grace
    (void)WorkloadFolders::WriteInPlace(w.dir + "/" + kStopGraceFile,
                                        std::to_string((grace_ms + 999) / 1000));
    *w.kill_deadline += kContainerStopMargin;
  }
  SaveState(request.allocation_id, w);
  if (w.pid > 1) kill(-w.pid, SIGTERM);
  spdlog::info("stopping {}: SIGTERM, SIGKILL in {} ms", request.allocation_id, request.grace_ms);
}

void WorkloadRunner::AppendPollItems(std::vector<zmq::pollitem_t>* items) {
  poll_first_ = items->size();
  items->push_back({nullptr, inotify_, ZMQ_POLLIN, 0});
  polled_.clear();
  for (const auto& [id, w] : workloads_) {
    if (w.pidfd < 0) continue;
    items->push_back({nullptr, w.pidfd, ZMQ_POLLIN, 0});
    polled_.push_back(id);
  }
}

void WorkloadRunner::CloseStream(Stream& stream) {
  if (stream.watch >= 0) {
    inotify_rm_watch(inotify_, stream.watch);
    watches_.erase(stream.watch);
  }
  stream.watch = -1;
  CloseFd(stream.fd);
}

bool WorkloadRunner::Drain(const std::string& allocation_id, Workload& w, Stream& stream,
                           bool final) {
  auto emit = [&](int64_t offset, std::string text) {
    shipper_.Add(allocation_id, w.task_id,
                 {UnixNanos(clock_.WallNow()), stream.stdtype, std::move(text), offset},
                 clock_.Now());
  };
  char buf[65536];
  stream.behind = false;
  while (stream.fd >= 0) {
    if (shipper_.Full(allocation_id)) {
      stream.behind = true;
      return false;
    }
    const ssize_t n = read(stream.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const int64_t base = stream.offset - static_cast<int64_t>(stream.partial.size());
    stream.partial.append(buf, static_cast<size_t>(n));
    stream.offset += n;
    size_t start = 0;
    for (size_t nl; (nl = stream.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      emit(base + static_cast<int64_t>(start), stream.partial.substr(start, nl - start));
    }
    while (stream.partial.size() - start >= kMaxLineBytes) {
      emit(base + static_cast<int64_t>(start), stream.partial.substr(start, kMaxLineBytes));
      start += kMaxLineBytes;
    }
    stream.partial.erase(0, start);
  }
  if (final && !stream.partial.empty()) {
    emit(stream.offset - static_cast<int64_t>(stream.partial.size()), std::move(stream.partial));
    stream.partial.clear();
  }
  return true;
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
  if (w.in_container) {
    ReportPhase(allocation_id, w, out);  // the steps it took since the last sweep come first
    RemoveContainer(allocation_id);      // gone already unless the pump was killed
  }
  CloseFd(w.pidfd);
  w.pid = -1;  // reaped (or not ours): never signalled again
  w.kill_deadline.reset();
  w.ended = true;
  w.wait_status = wait_status;
}

bool WorkloadRunner::Complete(const std::string& allocation_id, Workload& w, Reports* out) {
  const bool out_read = Drain(allocation_id, w, w.out, /*final=*/true);
  const bool err_read = Drain(allocation_id, w, w.err, /*final=*/true);
  if (!out_read || !err_read) return false;
  CloseStream(w.out);
  CloseStream(w.err);
  for (auto& batch : shipper_.TakeAll(allocation_id, clock_.Now())) {
    out->logs.push_back(std::move(batch));
  }
  const std::optional<int>& wait_status = w.wait_status;
  std::string exit_status = ReadFile(w.dir + "/" + kExitStatusFile);
  if (exit_status.empty() && wait_status && WIFSIGNALED(*wait_status)) {
    exit_status = "signal " + std::to_string(WTERMSIG(*wait_status));  // the shim itself was killed
  }
  bus::WorkloadState state = Termination(
      exit_status, w.in_container ? FileText(w.dir, kContainerEndFile) : "", w.kill_requested);
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
    alignas(inotify_event) char buf[8192];
    ssize_t n;
    while ((n = read(inotify_, buf, sizeof buf)) > 0) {
      for (char* p = buf; p < buf + n;) {
        auto* event = reinterpret_cast<inotify_event*>(p);
        if (auto it = watches_.find(event->wd); it != watches_.end()) {
          auto w = workloads_.find(it->second.first);
          if (w != workloads_.end()) {
            Drain(w->first, w->second, it->second.second ? w->second.err : w->second.out, false);
          }
        }
        p += sizeof(inotify_event) + event->len;
      }
    }
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
    const std::string state =
        w.in_container && !w.phase.empty() ? w.phase : std::string(bus::kWorkloadRunning);
    states.push_back({id, w.task_id, state, 0, "", ""});
  }
  return states;
}

}  // namespace det::agent
