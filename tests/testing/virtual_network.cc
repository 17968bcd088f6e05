#include "tests/testing/virtual_network.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

namespace det::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNetnsDir = "/var/run/netns";
constexpr const char* kSubnet = "10.99.0.";

// The inode that names a network namespace (0 when there is none at `path`).
ino_t NamespaceInode(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

bool Alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

// "dt<pid>-<host>": the pid of the run that made it.
pid_t CreatorOf(const std::string& netns) {
  if (netns.rfind("dt", 0) != 0) return -1;
  const size_t dash = netns.find('-');
  if (dash == std::string::npos || dash == 2) return -1;
  const std::string digits = netns.substr(2, dash - 2);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return static_cast<pid_t>(std::stol(digits));
}

std::vector<pid_t> ProcessesIn(ino_t netns_inode) {
  std::vector<pid_t> pids;
  if (netns_inode == 0) return pids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (NamespaceInode(entry.path() / "ns" / "net") == netns_inode) {
      pids.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return pids;
}

// SIGKILL to every process in the namespace until none is left (a few rounds: a dying shim may
// still fork); true when it is empty.
bool EmptyNamespace(const std::string& netns) {
  const ino_t inode = NamespaceInode(std::string(kNetnsDir) + "/" + netns);
  for (int round = 0; round < 50; ++round) {
    std::vector<pid_t> pids = ProcessesIn(inode);
    if (pids.empty()) return true;
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ProcessesIn(inode).empty();
}

void RemoveNamespace(const std::string& netns) {
  EmptyNamespace(netns);
  (void)RunArgv({"ip", "netns", "delete", netns});
}

}  // namespace

CommandResult RunArgv(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {false, "pipe: " + std::string(strerror(errno))};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    dprintf(2, "cannot run %s: %s\n", args[0], strerror(errno));
    _exit(127);
  }
  ::close(pipe_fds[1]);
  CommandResult result;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    result.output.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.ok = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return result;
}

std::string VirtualNetwork::WhyUnavailable() {
  if (::geteuid() != 0) return "needs root (network namespaces); run the suite as root";
  if (!RunArgv({"ip", "-V"}).ok) return "needs iproute2's `ip` (Debian package iproute2)";
  const std::string probe = "dt" + std::to_string(::getpid()) + "-probe";
  CommandResult made = RunArgv({"ip", "netns", "add", probe});
  (void)RunArgv({"ip", "netns", "delete", probe});
  if (!made.ok) return "network namespaces are refused here: " + made.output;
  return "";
}

Result<std::unique_ptr<VirtualNetwork>> VirtualNetwork::Create() {
  if (std::string why = WhyUnavailable(); !why.empty()) return FailedPrecondition(why);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kNetnsDir, ec)) {
    const std::string netns = entry.path().filename();
    const pid_t creator = CreatorOf(netns);
    if (creator > 0 && !Alive(creator)) RemoveNamespace(netns);
  }
  std::unique_ptr<VirtualNetwork> network(new VirtualNetwork());
  network->prefix_ = "dt" + std::to_string(::getpid()) + "-";
  network->switch_ = network->prefix_ + "switch";
  RemoveNamespace(network->switch_);  // this process's earlier network, if a test leaked one
  DET_RETURN_IF_ERROR(network->Ip({"netns", "add", network->switch_}));
  DET_RETURN_IF_ERROR(
      network->Ip({"-n", network->switch_, "link", "add", "br0", "type", "bridge"}));
  DET_RETURN_IF_ERROR(network->Ip({"-n", network->switch_, "link", "set", "br0", "up"}));
  return network;
}

VirtualNetwork::~VirtualNetwork() {
  for (const auto& [name, host] : hosts_) RemoveNamespace(host.netns);
  for (const std::string& netns : InstanceNamespaces()) RemoveNamespace(netns);
  RemoveNamespace(switch_);
}

std::vector<std::string> VirtualNetwork::InstanceHostEnvironment(
    const std::string& state_file) const {
  return {"DET_NETNS_PREFIX=" + prefix_, "DET_NETNS_STATE=" + state_file};
}

std::vector<std::string> VirtualNetwork::InstanceNamespaces() const {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kNetnsDir, ec)) {
    const std::string netns = entry.path().filename();
    if (netns.rfind(prefix_, 0) != 0 || netns == switch_) continue;
    bool is_host = false;
    for (const auto& [name, host] : hosts_) is_host = is_host || host.netns == netns;
    if (!is_host) found.push_back(netns);
  }
  return found;
}

std::vector<pid_t> VirtualNetwork::ProcessesInNamespace(const std::string& netns) {
  return ProcessesIn(NamespaceInode(std::string(kNetnsDir) + "/" + netns));
}

Status VirtualNetwork::Ip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult result = RunArgv(argv);
  if (result.ok) return Status::Ok();
  std::string command;
  for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
  return Internal(command + ": " + result.output);
}

Result<VirtualHost> VirtualNetwork::AddHost(const std::string& name) {
  if (hosts_.count(name)) return InvalidArgument("host " + name + " exists");
  if (next_address_ > 254) return FailedPrecondition("no address left in " + std::string(kSubnet));
  VirtualHost host{name, prefix_ + name, kSubnet + std::to_string(next_address_),
                   "p" + std::to_string(next_address_)};
  RemoveNamespace(host.netns);
  DET_RETURN_IF_ERROR(Ip({"netns", "add", host.netns}));
  DET_RETURN_IF_ERROR(Ip({"-n", switch_, "link", "add", host.switch_port, "type", "veth", "peer",
                          "name", "eth0", "netns", host.netns}));
  DET_RETURN_IF_ERROR(Ip({"-n", switch_, "link", "set", host.switch_port, "master", "br0", "up"}));
  DET_RETURN_IF_ERROR(Ip({"-n", host.netns, "addr", "add", host.address + "/24", "dev", "eth0"}));
  DET_RETURN_IF_ERROR(Ip({"-n", host.netns, "link", "set", "eth0", "up"}));
  DET_RETURN_IF_ERROR(Ip({"-n", host.netns, "link", "set", "lo", "up"}));
  ++next_address_;
  hosts_[name] = host;
  return host;
}

Status VirtualNetwork::Cut(const std::string& name) {
  return Ip({"-n", switch_, "link", "set", host(name).switch_port, "down"});
}

Status VirtualNetwork::Heal(const std::string& name) {
  return Ip({"-n", switch_, "link", "set", host(name).switch_port, "up"});
}

std::vector<std::string> VirtualNetwork::On(const std::string& name,
                                            std::vector<std::string> argv) const {
  std::vector<std::string> wrapped = {"/usr/bin/env", "ip", "netns", "exec", host(name).netns};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

Status VirtualNetwork::RunOn(const std::string& name, const std::function<void()>& fn) const {
  const int home = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  const int there =
      ::open((std::string(kNetnsDir) + "/" + host(name).netns).c_str(), O_RDONLY | O_CLOEXEC);
  Status status = Status::Ok();
  if (home < 0 || there < 0 || ::setns(there, CLONE_NEWNET) != 0) {
    status = Internal("cannot enter host " + name + ": " + strerror(errno));
  } else {
    fn();
    if (::setns(home, CLONE_NEWNET) != 0) {
      status = Internal("cannot leave host " + name + ": " + strerror(errno));
    }
  }
  if (home >= 0) ::close(home);
  if (there >= 0) ::close(there);
  return status;
}

std::vector<pid_t> VirtualNetwork::ProcessesOn(const std::string& name) const {
  return ProcessesIn(NamespaceInode(std::string(kNetnsDir) + "/" + host(name).netns));
}

int VirtualNetwork::KillEverythingOn(const std::string& name) {
  return KillEverythingInNamespace(host(name).netns);
}

int VirtualNetwork::KillEverythingInNamespace(const std::string& netns) {
  const int count = static_cast<int>(ProcessesInNamespace(netns).size());
  EmptyNamespace(netns);
  return count;
}

}  // namespace det::testing
