#pragma once

// Hosts for end-to-end tests, made on one machine: each host is a Linux network namespace with
// its own loopback and one link ("eth0", a veth pair) to a bridge that lives in a namespace of
// its own (the switch). Hosts get addresses 10.99.0.2, .3, ... in the order they are added and
// reach each other only by those addresses; nothing is added to the machine's own network, so
// runs side by side cannot collide. Everything else (files, users, processes' view of /proc) is
// shared, as between machines that mount one shared folder.
//
// Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2's `ip`. Namespace names carry the
// creating process's pid ("dt<pid>-<host>"), so namespaces a crashed run left behind are found
// and removed by the next one.
//
// Thread safety: one thread changes a VirtualNetwork (the test's); once its hosts are added, the
// const and static methods may be called from any thread.

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::testing {

struct VirtualHost {
  std::string name;         // "master", "agent-1"
  std::string netns;        // its namespace, under /var/run/netns
  std::string address;      // "10.99.0.3"
  std::string switch_port;  // its link's end on the bridge, in the switch namespace
};

class VirtualNetwork {
 public:
  // Why hosts cannot be made on this machine ("" when they can): not root, no `ip`, network
  // namespaces refused.
  static std::string WhyUnavailable();

  // Makes the switch (a namespace with the bridge), after removing what dead runs left behind.
  static Result<std::unique_ptr<VirtualNetwork>> Create();
  // Kills every process on every host (instances' too) and removes the namespaces.
  ~VirtualNetwork();

  // A new host linked to the switch, its address the next free one.
  Result<VirtualHost> AddHost(const std::string& name);
  const VirtualHost& host(const std::string& name) const { return hosts_.at(name); }

  // Takes the host's link down at the switch: what it sends and what is sent to it is dropped,
  // as when a cable is pulled; connections are not reset. Heal() brings it back.
  Status Cut(const std::string& name);
  Status Heal(const std::string& name);

  // argv run on `name` (`ip netns exec`): what it then runs there too. The pid is argv's own.
  std::vector<std::string> On(const std::string& name, std::vector<std::string> argv) const;

  // Runs `fn` on the calling thread inside `name`'s namespace, then returns it to the namespace
  // it was in. Threads and processes `fn` starts stay in `name`'s.
  Status RunOn(const std::string& name, const std::function<void()>& fn) const;

  // The environment tests/multihost/instance-host.sh needs to add hosts to this network (a fake
  // cloud's instances); their namespaces go with the network too. `state_file`: a scratch file.
  std::vector<std::string> InstanceHostEnvironment(const std::string& state_file) const;
  // Names of the hosts instance-host.sh added (their namespaces, "dt<pid>-<instance id>").
  std::vector<std::string> InstanceNamespaces() const;
  std::string InstanceNamespace(const std::string& instance_id) const {
    return prefix_ + instance_id;
  }

  // Every process whose network namespace is `name`'s.
  std::vector<pid_t> ProcessesOn(const std::string& name) const;
  // The same, for a namespace of this network by its name (an instance's).
  static std::vector<pid_t> ProcessesInNamespace(const std::string& netns);
  // SIGKILL to every process in the namespace until none is left; how many there were.
  static int KillEverythingInNamespace(const std::string& netns);
  // SIGKILL to every process on `name` (the host loses power); returns how many there were.
  int KillEverythingOn(const std::string& name);

 private:
  VirtualNetwork() = default;
  Status Ip(const std::vector<std::string>& args) const;

  std::string prefix_;  // "dt<pid>-"
  std::string switch_;  // the switch's namespace
  std::map<std::string, VirtualHost> hosts_;
  int next_address_ = 2;
};

// The command line's output (stdout and stderr), and whether it exited 0.
struct CommandResult {
  bool ok = false;
  std::string output;
};
CommandResult RunArgv(const std::vector<std::string>& argv);

}  // namespace det::testing
