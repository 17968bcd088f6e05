#pragma once

// Real processes on loopback: det-master, det-agent and the det CLI, each its own process, with a
// fresh database from the test binary's PostgreSQL. DET_BUILD_DIR names the build folder.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bus/rpc_client.h"
#include "common/config.h"
#include "common/process.h"
#include "tests/testing/postgres_fixture.h"
#include "tests/testing/test_util.h"

namespace det::testing {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

inline std::string BuildDir() {
  const char* dir = std::getenv("DET_BUILD_DIR");
  return dir ? dir : ".";
}

// A child process, killed (SIGKILL) if still running when destroyed.
class Process {
 public:
  Process(std::vector<std::string> argv, const fs::path& log, bool append = false) {
    pid_ = fork();
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      dprintf(2, "cannot run %s: %s (is DET_BUILD_DIR set?)\n", args[0], strerror(errno));
      _exit(127);
    }
  }
  ~Process() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // Sends `signal` and waits for the exit; its status as a shell reports it. A second call is a
  // no-op (-1): kill(-1, ...) would signal every process of the machine.
  int Stop(int signal = SIGTERM) {
    if (pid_ <= 0) return -1;
    kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

inline std::string Shell(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  pclose(pipe);
  return out;
}

// The admin password every test cluster starts with (security.initial_user_password).
inline constexpr const char* kAdminPassword = "admin-test-password";

class ClusterProcessTest : public ::testing::Test {
 protected:
  // Extra master.yaml lines under `bus:` (indented two spaces).
  virtual std::string ExtraBusConfig() const { return ""; }
  // The address every master socket listens on (bus.host).
  virtual std::string BusHost() const { return "127.0.0.1"; }
  // Extra top-level master.yaml sections (resource_manager, resource_pools, ...).
  virtual std::string ExtraConfig() const { return ""; }
  // Extra master.yaml lines under `security:` (indented two spaces).
  virtual std::string ExtraSecurityConfig() const { return ""; }

  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-cluster-" + bus::RandomId());
    fs::create_directories(dir_);
    // As /tmp is: tasks of a root agent run as `nobody` (its default_task_user) and write here.
    fs::permissions(dir_, fs::perms(01777));
    db_ = det::testing::PostgresEnvironment::Get()->FreshDatabase();
    // The ports RestartMaster binds again: below the ephemeral range, so that no other socket
    // takes them meanwhile (test_util.h).
    std::ofstream(dir_ / "master.yaml")
        << DbSection() << "port: " << PortBelowEphemeralRange() << "\n"
        << "bus:\n  host: " << BusHost() << "\n  gateway_port: " << PortBelowEphemeralRange()
        << "\n  agent_port: " << PortBelowEphemeralRange()
        << "\n  event_subscribe_port: 0\n  event_publish_port: 0\n  snapshot_port: 0\n"
           "  agent_silence_limit: 2s\n  security: {plaintext: true}\n"
        << ExtraBusConfig() << SecurityConfig() << ExtraConfig();
    master_ = std::make_unique<Process>(
        std::vector<std::string>{BuildDir() + "/master/det-master", "-c",
                                 (dir_ / "master.yaml").string(), "--endpoints-file",
                                 (dir_ / "endpoints.yaml").string()},
        dir_ / "master.log");
    // Up to 30 s: under ASan on a loaded 2-core machine the first start (migrations, the admin's
    // PBKDF2 hash) once took more than the 5 s this waited before.
    for (int i = 0; i < 600 && !fs::exists(dir_ / "endpoints.yaml"); ++i)
      std::this_thread::sleep_for(50ms);
    auto endpoints = LoadYamlFile((dir_ / "endpoints.yaml").string());
    ASSERT_TRUE(endpoints.ok()) << "master did not start: " << Log("master.log");
    gateway_ = (*endpoints)["gateway"].as<std::string>();
    event_subscribe_ = (*endpoints)["event_subscribe"].as<std::string>();
    snapshot_ = (*endpoints)["snapshot"].as<std::string>();
    agent_port_ = gateway_port_of((*endpoints)["agent"].as<std::string>());
    rest_port_ = gateway_port_of((*endpoints)["rest"].as<std::string>());
  }
  void TearDown() override {
    KillLeftoverWorkloads();
    fs::remove_all(dir_);
  }
  // Workloads outlive their agents by design; a test's must not outlive the test.
  void KillLeftoverWorkloads() {
    StopProcessGroups(ProcessGroupsLedBy(kWorkloadShimProgram, dir_.string()),
                      std::chrono::milliseconds(0));
  }

  std::string SecurityConfig() const {
    return std::string("security:\n  initial_user_password: ") + kAdminPassword + "\n" +
           ExtraSecurityConfig();
  }
  std::string DbSection() const {
    return "db:\n  host: " + db_.host + "\n  port: " + std::to_string(db_.port) +
           "\n  name: " + db_.name + "\n  user: " + db_.user + "\n  password: " + db_.password +
           "\n";
  }
  static std::string gateway_port_of(const std::string& e) { return e.substr(e.rfind(':') + 1); }
  std::string Log(const std::string& name) {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::unique_ptr<Process> StartAgent(const std::string& id, int slots = 2,
                                      const std::string& pool = "default") {
    return std::make_unique<Process>(
        std::vector<std::string>{BuildDir() + "/agent/det-agent", "--master-port", agent_port_,
                                 "--agent-id", id, "--artificial-slots", std::to_string(slots),
                                 "--resource-pool", pool, "--work-dir",
                                 (dir_ / ("work-" + id)).string(), "--plaintext"},
        dir_ / (id + ".log"), /*append=*/true);
  }
  // Waits until the named log file contains `needle`.
  bool WaitForLog(const std::string& name, const std::string& needle) {
    for (int i = 0; i < 100; ++i) {
      if (Log(name).find(needle) != std::string::npos) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }
  // kill -9 the master and start another on the same gateway and agent ports and database.
  void RestartMaster() {
    master_->Stop(SIGKILL);
    std::ofstream(dir_ / "master2.yaml")
        << DbSection() << "port: " << rest_port_ << "\nbus:\n  host: " << BusHost()
        << "\n  gateway_port: " << gateway_port_of(gateway_) << "\n  agent_port: " << agent_port_
        << "\n  event_subscribe_port: 0\n  event_publish_port: 0\n  snapshot_port: 0\n"
           "  security: {plaintext: true}\n"
        << ExtraBusConfig() << SecurityConfig() << ExtraConfig();
    master_ =
        std::make_unique<Process>(std::vector<std::string>{BuildDir() + "/master/det-master", "-c",
                                                           (dir_ / "master2.yaml").string()},
                                  dir_ / "master2.log");
  }
  // `det user create` as admin, the password on standard input; "rc=N" on the last line.
  std::string CreateUser(const std::string& name, const std::string& password,
                         const std::string& flags = "") {
    return Shell("printf '%s\\n' '" + password + "' | " +
                 DetCommand("DET_USER=admin DET_PASS=" + std::string(kAdminPassword) +
                                " DET_AUTH_FILE=" + (dir_ / "auth-admin.json").string(),
                            "user create " + name + " " + flags + "; echo rc=$?"));
  }
  // Runs det with the test's master as `admin` (logged in by DET_USER/DET_PASS, the session kept
  // in the test's folder); gives up after two minutes.
  std::string Det(const std::string& args) { return DetAs("admin", kAdminPassword, args); }
  // Runs det as `user` with `password` ("" : no login), its own session cache per user.
  std::string DetAs(const std::string& user, const std::string& password, const std::string& args) {
    return Shell(DetCommand("DET_USER=" + user + " DET_PASS='" + password +
                                "' DET_AUTH_FILE=" + (dir_ / ("auth-" + user + ".json")).string(),
                            args));
  }
  // The shell command that runs det with `env` (VAR=value ...) and `args`, output and errors
  // together.
  std::string DetCommand(const std::string& env, const std::string& args) const {
    return "{ " + env + " timeout 120 " + BuildDir() + "/cli/det --plaintext -m " + gateway_ + " " +
           args + "; } 2>&1";
  }
  // det cmd run: the new task's id ("" on failure, which the test is told of).
  std::string Run(const std::string& entrypoint, const std::string& flags = "") {
    return RunAs("admin", kAdminPassword, entrypoint, flags);
  }
  // What follows `marker` on the first line of `task_id`'s output that has it, once one has (as
  // `user`; at most 30 s, then "").
  std::string WaitForOutput(const std::string& user, const std::string& password,
                            const std::string& task_id, const std::string& marker) {
    for (int i = 0; i < 300; ++i) {
      const std::string logs = DetAs(user, password, "task logs " + task_id);
      const size_t at = logs.find(marker);
      if (at != std::string::npos) {
        const size_t from = at + marker.size();
        return logs.substr(from, logs.find('\n', from) - from);
      }
      std::this_thread::sleep_for(100ms);
    }
    return "";
  }
  // `det cmd run` as `user`: the task's id ("" when it was not submitted).
  std::string RunAs(const std::string& user, const std::string& password,
                    const std::string& entrypoint, const std::string& flags = "") {
    const std::string out =
        DetAs(user, password, "--json cmd run " + flags + " '" + entrypoint + "'");
    auto reply = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(reply.is_object()) << out;
    return reply.is_object() ? reply.value("task_id", "") : "";
  }
  // Waits for the task to end and returns its summary.
  nlohmann::json Wait(const std::string& task_id) {
    const std::string out = Det("--json task wait " + task_id);
    auto summary = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(summary.is_object()) << out;
    return summary;
  }
  std::vector<std::string> LogTexts(const std::string& task_id) {
    std::vector<std::string> texts;
    std::stringstream lines(Det("--json task logs " + task_id));
    for (std::string line; std::getline(lines, line);) {
      auto entry = nlohmann::json::parse(line, nullptr, false);
      if (entry.is_object()) texts.push_back(entry.value("log", ""));
    }
    return texts;
  }
  bool WaitFor(const std::string& args, const std::string& needle) {
    for (int i = 0; i < 100; ++i) {
      if (Det(args).find(needle) != std::string::npos) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  fs::path dir_;
  storage::DbConfig db_;
  std::unique_ptr<Process> master_;
  std::string gateway_, agent_port_, rest_port_, event_subscribe_, snapshot_;
};

}  // namespace det::testing
