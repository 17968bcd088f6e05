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
  std::vector<std::string> argv = wrapper;
  argv.insert(argv.end(), {"/bin/bash", path.string()});
  Result<pid_t> pid = SpawnDetached(argv, env, (dir / "boot.log").string());
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
