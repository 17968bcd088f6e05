// The shim server (agent/shim/shim_server.h) as the agent's runner uses it through ShimLauncher,
// with the built det-workload-shim: each workload's shim is a clone of one long-lived server, a
// child of this process that leads its group in the workload's folder; a server that dies is
// replaced without starting a workload twice; what cannot start is reported as before.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/shim/workload_shim.h"
#include "agent/shim_launcher.h"
#include "agent/workload_folders.h"
#include "agent/workload_record.h"
#include "tests/testing/cluster_fixture.h"
#include "tests/testing/test_util.h"

namespace det::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What /proc says PID runs: its command line with NULs as spaces.
std::string CommandLine(pid_t pid) {
  std::string line = Slurp("/proc/" + std::to_string(pid) + "/cmdline");
  std::replace(line.begin(), line.end(), '\0', ' ');
  return line;
}

pid_t ParentOf(pid_t pid) {
  const std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  char state = 0;
  pid_t parent = -1;
  fields >> state >> parent;
  return parent;
}

// The exit code of this process's child `pid` (128 + signal when killed by one).
int WaitFor(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class ShimServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shim_ = testing::BuildDir() + "/agent/" + kWorkloadShimProgram;
    if (access(shim_.c_str(), X_OK) != 0) GTEST_SKIP() << shim_ << " is not built";
    root_ = fs::temp_directory_path() / ("det-shim-server-" + std::to_string(getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  // A fresh workload folder.
  std::string Folder(const std::string& name) {
    fs::create_directories(root_ / name);
    return (root_ / name).string();
  }

  std::string shim_;
  fs::path root_;
};

TEST_F(ShimServerTest, EachShimIsACloneOfOneServerLeadingItsGroupInItsFolder) {
  ShimLauncher launcher(shim_);
  std::vector<pid_t> shims;
  std::vector<std::string> folders;
  for (const char* name : {"one", "two"}) {
    folders.push_back(Folder(name));
    // The workload says it runs before it sleeps, so that the stop below finds it started.
    auto pid = launcher.Spawn({"/bin/sh", "-c", "touch started; exec sleep 30"},
                              {"PATH=/usr/bin:/bin"}, folders.back());
    ASSERT_TRUE(pid.ok()) << pid.status().message();
    shims.push_back(*pid);
  }
  const pid_t server = launcher.server_pid();
  ASSERT_GT(server, 0);
  EXPECT_NE(CommandLine(server).find(kWorkloadShimProgram), std::string::npos);
  for (size_t i = 0; i < shims.size(); ++i) {
    SCOPED_TRACE(folders[i]);
    EXPECT_EQ(CommandLine(shims[i]), CommandLine(server)) << "not a clone of the server";
    EXPECT_EQ(ParentOf(shims[i]), getpid()) << "the agent reaps its shims";
    EXPECT_EQ(getpgid(shims[i]), shims[i]);
    EXPECT_TRUE(IsShimOf(shims[i], folders[i]));
    EXPECT_FALSE(IsShimOf(shims[i], folders[1 - i]));
    EXPECT_FALSE(IsShimOf(server, folders[i]));
  }
  // The group's stop reaches the workload, not the shim, which records how it ended.
  for (const std::string& folder : folders) {
    ASSERT_TRUE(testing::Eventually([&] { return fs::exists(folder + "/started"); }, 10s));
  }
  for (pid_t shim : shims) kill(-shim, SIGTERM);
  for (size_t i = 0; i < shims.size(); ++i) {
    EXPECT_EQ(WaitFor(shims[i]), 128 + SIGTERM);
    EXPECT_EQ(Slurp(folders[i] + "/" + kExitStatusFile), "signal 15");
  }
  EXPECT_EQ(launcher.server_pid(), server) << "one server for every workload";
}

TEST_F(ShimServerTest, TheWorkloadGetsItsEnvironmentAndOutputFilesAndItsEndIsRecorded) {
  ShimLauncher launcher(shim_);
  const std::string dir = Folder("run");
  auto pid = launcher.Spawn({"/bin/sh", "-c", "echo \"$GREETING\"; pwd; echo oops >&2; exit 3"},
                            {"GREETING=hello there", "PATH=/usr/bin:/bin"}, dir);
  ASSERT_TRUE(pid.ok()) << pid.status().message();
  EXPECT_EQ(WaitFor(*pid), 3);
  EXPECT_EQ(Slurp(dir + "/" + kStdoutFile), "hello there\n" + dir + "\n");
  EXPECT_EQ(Slurp(dir + "/" + kStderrFile), "oops\n");
  EXPECT_EQ(Slurp(dir + "/" + kExitStatusFile), "exit 3");

  const std::string missing = Folder("missing-program");
  auto started = launcher.Spawn({"/no/such/program"}, {}, missing);
  ASSERT_TRUE(started.ok()) << started.status().message();
  EXPECT_EQ(WaitFor(*started), 127);
  EXPECT_EQ(Slurp(missing + "/" + kExitStatusFile).rfind("start-failed /no/such/program", 0), 0u);
}

TEST_F(ShimServerTest, AFolderThatCannotBeUsedIsAnErrorNamingItAndLeavesNoZombie) {
  ShimLauncher launcher(shim_);
  const std::string gone = (root_ / "never-made").string();
  auto pid = launcher.Spawn({"true"}, {}, gone);
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.status().message().find(gone), std::string::npos) << pid.status().message();
  int status = 0;
  EXPECT_LE(waitpid(-1, &status, WNOHANG), 0) << "the failed clone was not reaped";
  auto after = launcher.Spawn({"true"}, {}, Folder("after"));  // the server serves on
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(WaitFor(*after), 0);
}

TEST_F(ShimServerTest, AKilledServerIsReplacedAndNoWorkloadStartsTwice) {
  ShimLauncher launcher(shim_);
  const fs::path starts = root_ / "starts";
  const std::string count = "echo started >> " + starts.string();
  auto first = launcher.Spawn({"/bin/sh", "-c", count}, {}, Folder("first"));
  ASSERT_TRUE(first.ok()) << first.status().message();
  const pid_t server = launcher.server_pid();
  kill(server, SIGKILL);
  // Dead before the next request (a request sent as it dies may have been taken: that one is
  // reported failed rather than risk a second start).
  ASSERT_TRUE(testing::Eventually([&] { return IsZombie(server); }, 10s));
  auto second = launcher.Spawn({"/bin/sh", "-c", count}, {}, Folder("second"));
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_NE(launcher.server_pid(), server);
  EXPECT_GT(launcher.server_pid(), 0);
  EXPECT_EQ(WaitFor(*first), 0);
  EXPECT_EQ(WaitFor(*second), 0);
  EXPECT_EQ(Slurp(starts), "started\nstarted\n");
  EXPECT_NE(kill(server, 0), 0) << "the killed server was not reaped";
}

// A shim program without a server (an older one) is run once per workload, as before.
TEST_F(ShimServerTest, AProgramThatServesNothingIsRunPerWorkload) {
  const fs::path old_shim = root_ / "old-shim";
  fs::create_directories(root_);
  std::ofstream(old_shim) << "#!/bin/sh\n"
                             "[ \"$1\" = __workload ] || exit 2\n"
                             "cd \"$2\" && shift 2 && exec \"$@\"\n";
  fs::permissions(old_shim, fs::perms::owner_all);
  ShimLauncher launcher(old_shim.string());
  const std::string dir = Folder("old");
  auto pid = launcher.Spawn({"/bin/sh", "-c", "echo ran"}, {"PATH=/usr/bin:/bin"}, dir);
  ASSERT_TRUE(pid.ok()) << pid.status().message();
  EXPECT_EQ(WaitFor(*pid), 0);
  EXPECT_EQ(Slurp(dir + "/" + kStdoutFile), "ran\n");
  EXPECT_EQ(launcher.server_pid(), -1);
}

}  // namespace
}  // namespace det::agent
