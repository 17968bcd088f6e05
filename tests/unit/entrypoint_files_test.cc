#include "master/experiments/entrypoint_files.h"

#include <gtest/gtest.h>

namespace det::master::experiments {
namespace {

std::vector<ModelFile> Files(std::initializer_list<const char*> paths) {
  std::vector<ModelFile> files;
  for (const char* path : paths) files.push_back({path, "", false});
  return files;
}

TEST(EntrypointFilesTest, AScriptTheModelDefinitionLacksIsNamed) {
  const auto files = Files({"train.py", "model.py", "data/MNIST/raw/x"});
  EXPECT_TRUE(EntrypointWarnings({"python3 train.py --epochs 1"}, files).empty());
  EXPECT_TRUE(EntrypointWarnings({"python3", "./train.py"}, files).empty());
  EXPECT_TRUE(
      EntrypointWarnings(
          {"python3 -m determined.launch.torch_distributed python3 train.py --epochs 1"}, files)
          .empty())
      << "a module run with -m may be installed in the image: not checked";
  const auto missing = EntrypointWarnings({"python3 trian.py"}, files);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("trian.py is not in the model definition"), std::string::npos)
      << missing[0];
  EXPECT_TRUE(EntrypointWarnings({"python3 /opt/app/train.py"}, files).empty())
      << "an absolute path is the image's";
  EXPECT_TRUE(EntrypointWarnings({"python3 trian.py"}, {}).empty()) << "no model definition";
}

TEST(EntrypointFilesTest, ALegacyEntrypointNeedsItsModule) {
  EXPECT_TRUE(EntrypointWarnings({"model_def:MNistTrial"}, Files({"model_def.py"})).empty());
  EXPECT_TRUE(
      EntrypointWarnings({"pkg.trials:MNistTrial"}, Files({"pkg/trials/__init__.py"})).empty());
  const auto missing = EntrypointWarnings({"model_def:MNistTrial"}, Files({"train.py"}));
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("no model_def.py"), std::string::npos) << missing[0];
}

}  // namespace
}  // namespace det::master::experiments
