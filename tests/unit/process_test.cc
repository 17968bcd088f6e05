#include "common/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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

}  // namespace
}  // namespace det
