#pragma once

// A fake cloud's instance "booting": its boot script (EC2 user data, a Compute Engine
// startup-script) run with bash on this host, in a session of its own, so that the agent it
// starts is a real det-agent and the whole instance can be killed as one process group.

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace det::testing {

class BootedScript {
 public:
  // Writes `script` to `dir`/`file_name` and runs it with `env` added, its output to
  // `dir`/boot.log; under `wrapper` (an argv that runs the rest of its arguments) when given.
  // DET_IPTABLES (unless `env` sets it) is a stand-in that records the script's iptables calls
  // in `dir`/iptables.log: this host's firewall is left alone.
  // False when it could not be started.
  bool Start(const std::filesystem::path& dir, const std::string& file_name,
             const std::string& script, const std::map<std::string, std::string>& env,
             const std::vector<std::string>& wrapper = {});
  // SIGKILL to the whole session, then waits for it.
  void Kill();
  // Notices a script that ended by itself (no zombie stays).
  void Reap();
  bool running() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

}  // namespace det::testing
