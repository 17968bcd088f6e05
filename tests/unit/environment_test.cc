// What a workload run as a process takes from the agent's environment, and which variables a
// user's config may set.
#include "common/environment.h"

#include <gtest/gtest.h>

namespace det {
namespace {

TEST(WorkloadInheritsTest, PythonSystemAndCudaSettingsPassAndSecretsDoNot) {
  for (const char* name : {"PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "PYTHONPYCACHEPREFIX",
                           "PYTHONDONTWRITEBYTECODE", "NCCL_DEBUG", "CUDA_HOME"}) {
    EXPECT_TRUE(WorkloadInherits(name)) << name;
  }
  for (const char* name : {"AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "DET_USER_TOKEN",
                           "GOOGLE_APPLICATION_CREDENTIALS", "PYTHONSTARTUP", "LD_PRELOAD"}) {
    EXPECT_FALSE(WorkloadInherits(name)) << name;
  }
}

TEST(WhyNotAWorkloadVariableTest, NamesDetSetsAndNonNamesAreRefusedWithTheReason) {
  EXPECT_EQ(WhyNotAWorkloadVariable("MY_FLAG"), "");
  EXPECT_NE(WhyNotAWorkloadVariable("DET_TASK_ID").find("set by det"), std::string::npos);
  EXPECT_NE(WhyNotAWorkloadVariable("CUDA_VISIBLE_DEVICES").find("set by det"), std::string::npos);
  EXPECT_NE(WhyNotAWorkloadVariable("1X").find("not a variable name"), std::string::npos);
  EXPECT_NE(WhyNotAWorkloadVariable("A-B").find("not a variable name"), std::string::npos);
}

}  // namespace
}  // namespace det
