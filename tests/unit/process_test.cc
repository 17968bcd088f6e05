#include "common/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/testing/test_util.h"

namespace det {
namespace {

TEST(SpawnDetachedTest, TheProgramGetsItsTagsItsLogAndNoOtherDescriptor) {
  const auto log = std::filesystem::temp_directory_path() / "det-spawn-test.log";
  std::filesystem::remove(log);
  const int leaked = dup2(::open("/dev/null", O_RDONLY), 57);  // no close-on-exec
  ASSERT_EQ(leaked, 57);
  auto pid = SpawnDetached({"/bin/sh", "-c", "echo tag=$DET_TEST_TAG; ls /proc/$$/fd"},
                           {{"DET_TEST_TAG", "t-1"}}, log.string());
  ::close(leaked);
  ASSERT_TRUE(pid.ok()) << pid.status().message();
  int status = 0;
  ASSERT_EQ(waitpid(*pid, &status, 0), *pid);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("tag=t-1"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("57"), std::string::npos) << text.str();
  std::filesystem::remove(log);
}

TEST(SpawnDetachedTest, AMissingProgramIsNamed) {
  auto pid = SpawnDetached({"/no/such/program"}, {}, "/dev/null");
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().message(), "/no/such/program is not an executable file");
}

// A `sleep` leading its own process group in `dir`, as the agent starts a workload's shim.
pid_t StartGroupLeaderIn(const std::filesystem::path& dir) {
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    if (chdir(dir.c_str()) != 0) _exit(127);
    execlp("sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  return pid;
}

TEST(ProcessGroupsLedByTest, FindsTheGroupsOfAProgramInAFolderAndStopsThem) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("det-groups-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "work" / "a1");
  std::filesystem::create_directories(dir / "elsewhere");
  const pid_t inside = StartGroupLeaderIn(dir / "work" / "a1");
  const pid_t outside = StartGroupLeaderIn(dir / "elsewhere");
  ASSERT_GT(inside, 0);
  ASSERT_GT(outside, 0);
  std::vector<pid_t> found;
  (void)testing::WaitFor([&] {  // until the child has exec'd sleep
    found = ProcessGroupsLedBy("sleep", (dir / "work").string());
    return !found.empty();
  });
  EXPECT_EQ(found, std::vector<pid_t>{inside});
  EXPECT_TRUE(ProcessGroupsLedBy("det-workload-shim", (dir / "work").string()).empty());
  EXPECT_TRUE(ProcessGroupsLedBy("sleep", (dir / "wor").string()).empty());  // not a prefix match

  StopProcessGroups(found, std::chrono::seconds(5));
  int status = 0;
  ASSERT_EQ(waitpid(inside, &status, 0), inside);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_EQ(waitpid(outside, &status, WNOHANG), 0);  // the one elsewhere runs on
  kill(outside, SIGKILL);
  waitpid(outside, &status, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace det
