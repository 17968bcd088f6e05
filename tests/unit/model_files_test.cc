#include "master/experiments/model_files.h"

#include <gtest/gtest.h>

#include <random>

namespace det::master::experiments {
namespace {

TEST(ModelFilesTest, FilesPackIntoATarGzAndReadBackInOrder) {
  const std::vector<ModelFile> files = {{"src", "", true, 0755, 1700000000},
                                        {"src/train.py", "print('hi')\n", false, 0644, 1700000001},
                                        {"const.yaml", "name: x\n", false, 0600, 1700000002},
                                        {"empty.txt", "", false, 0644, 0}};
  auto packed = PackModelFiles(files, 1 << 20);
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  EXPECT_EQ(packed->substr(0, 2), "\x1f\x8b") << "gzip";
  auto read = ReadModelFiles(*packed, /*with_content=*/true);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ((*read)[i].path, files[i].path);
    EXPECT_EQ((*read)[i].content, files[i].content);
    EXPECT_EQ((*read)[i].is_dir, files[i].is_dir);
    EXPECT_EQ((*read)[i].mode, files[i].mode);
    EXPECT_EQ((*read)[i].mtime, files[i].mtime);
    EXPECT_EQ((*read)[i].size, static_cast<int64_t>(files[i].content.size()));
  }
  auto listed = ReadModelFiles(*packed, /*with_content=*/false);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)[1].size, 12);
  EXPECT_TRUE((*listed)[1].content.empty());
}

TEST(ModelFilesTest, PathsOutsideTheFolderAndOversizedArchivesAreRefused) {
  for (const char* path : {"/etc/passwd", "../up.py", "a/../../b", ""}) {
    auto packed = PackModelFiles({{path, "x"}}, 1 << 20);
    ASSERT_FALSE(packed.ok()) << path;
    EXPECT_NE(packed.status().message().find("modelDefinition"), std::string::npos);
  }
  EXPECT_TRUE(PackModelFiles({{"a/..b/c..", "x"}}, 1 << 20).ok()) << "dots inside a name are fine";
  std::mt19937 random(7);
  std::string noise;
  for (int i = 0; i < 200000; ++i) noise += static_cast<char>(random() & 0xff);
  auto large = PackModelFiles({{"noise.bin", noise}}, 64 << 10);
  ASSERT_FALSE(large.ok());
  EXPECT_NE(large.status().message().find("65536 bytes packed"), std::string::npos)
      << large.status().message();
  EXPECT_FALSE(ReadModelFiles("not a tarball", false).ok());
}

}  // namespace
}  // namespace det::master::experiments
