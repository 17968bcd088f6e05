#include "tests/fakes/booted_script.h"

#include <signal.h>
#include <sys/wait.h>

#include <fstream>

#include "common/process.h"

namespace det::testing {

bool BootedScript::Start(const std::filesystem::path& dir, const std::string& file_name,
                         const std::string& script, const std::map<std::string, std::string>& env,
                         const std::vector<std::string>& wrapper) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / file_name;
  std::ofstream(path) << script;
  // This host's firewall is not the instance's: the boot script's iptables calls are recorded in
  // `dir`/iptables.log (no rule exists yet for -C).
  const std::filesystem::path iptables = dir / "iptables";
  std::ofstream(iptables) << "#!/bin/sh\necho \"$*\" >> \"$(dirname \"$0\")/iptables.log\"\n"
                             "[ \"$1\" = -C ] && exit 1\nexit 0\n";
  std::filesystem::permissions(iptables, std::filesystem::perms::owner_all);
  std::map<std::string, std::string> boot_env = {{"DET_IPTABLES", iptables.string()}};
  for (const auto& [key, value] : env) boot_env[key] = value;
  std::vector<std::string> argv = wrapper;
  argv.insert(argv.end(), {"/bin/bash", path.string()});
  Result<pid_t> pid = SpawnDetached(argv, boot_env, (dir / "boot.log").string());
  if (!pid.ok()) return false;
  pid_ = *pid;
  return true;
}

void BootedScript::Kill() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void BootedScript::Reap() {
  if (pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == pid_) pid_ = -1;
}

}  // namespace det::testing
