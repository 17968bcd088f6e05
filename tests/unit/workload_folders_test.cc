// WorkloadFolders on a real file system: recycling keeps inodes, empties folders, and never
// reaches outside them.
#include "agent/workload_folders.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agent/shim/workload_shim.h"
#include "bus/rpc_client.h"
#include "common/files.h"

namespace det::agent {
namespace {

namespace fs = std::filesystem;

ino_t InodeOf(const fs::path& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

class WorkloadFoldersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-folders-" + bus::RandomId());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A folder as a finished workload leaves it: output, an exit status, a state, its own files.
  std::string FinishedWorkload(WorkloadFolders& folders, const std::string& id) {
    auto dir = folders.Prepare(id);
    EXPECT_TRUE(dir.ok()) << dir.status().ToString();
    Write(*dir + "/" + kStdoutFile, "old output\n");
    Write(*dir + "/" + kStderrFile, "old errors\n");
    Write(*dir + "/" + kExitStatusFile, "exit 0");
    Write(*dir + "/" + kStateFile, R"({"pid": 1})");
    fs::create_directories(*dir + "/checkpoints/step-1");
    Write(*dir + "/checkpoints/step-1/model.bin", "weights");
    return *dir;
  }

  fs::path dir_;
};

TEST_F(WorkloadFoldersTest, ARetiredFolderIsReusedEmptiedWithTheSameInodes) {
  WorkloadFolders folders(dir_.string(), 4);
  const std::string first = FinishedWorkload(folders, "alloc-1");
  const ino_t folder_inode = InodeOf(first), stdout_inode = InodeOf(first + "/" + kStdoutFile);

  folders.Retire("alloc-1");
  EXPECT_FALSE(fs::exists(first));
  EXPECT_EQ(folders.spare_count(), 1u);
  auto second = folders.Prepare("alloc-2");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, (dir_ / "alloc-2").string());
  EXPECT_EQ(InodeOf(*second), folder_inode);
  EXPECT_EQ(InodeOf(*second + "/" + kStdoutFile), stdout_inode);
  for (const char* file : {kStdoutFile, kStderrFile, kExitStatusFile, kStateFile}) {
    EXPECT_EQ(fs::file_size(*second + "/" + file), 0u) << file;
  }
  EXPECT_FALSE(fs::exists(*second + "/checkpoints"));
  EXPECT_EQ(folders.spare_count(), 0u);
}

TEST_F(WorkloadFoldersTest, OwnFilesReplacedByLinksAreNeverFollowedAndTheFolderIsDeleted) {
  WorkloadFolders folders(dir_.string(), 4);
  const fs::path outside = dir_ / "precious.txt";
  Write(outside, "keep me");
  const std::string symlinked = FinishedWorkload(folders, "alloc-sym");
  fs::remove(symlinked + "/" + kStdoutFile);
  fs::create_symlink(outside, symlinked + "/" + kStdoutFile);
  const std::string hardlinked = FinishedWorkload(folders, "alloc-hard");
  fs::remove(hardlinked + "/" + kStderrFile);
  fs::create_hard_link(outside, hardlinked + "/" + kStderrFile);

  folders.Retire("alloc-sym");
  folders.Retire("alloc-hard");

  EXPECT_EQ(Read(outside), "keep me");
  EXPECT_FALSE(fs::exists(symlinked));
  EXPECT_FALSE(fs::exists(hardlinked));
  EXPECT_EQ(folders.spare_count(), 0u);
}

TEST_F(WorkloadFoldersTest, SparesBeyondTheLimitAreDeleted) {
  WorkloadFolders folders(dir_.string(), 1);
  const std::string a = FinishedWorkload(folders, "a");
  const std::string b = FinishedWorkload(folders, "b");
  folders.Retire("a");
  folders.Retire("b");
  EXPECT_EQ(folders.spare_count(), 1u);
  EXPECT_FALSE(fs::exists(b));
  size_t waiting = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_ / ".spare")) ++waiting;
  EXPECT_EQ(waiting, 1u);
}

TEST_F(WorkloadFoldersTest, StockedSparesSurviveARestartAndNewOnesDoNotClashWithThem) {
  {
    WorkloadFolders folders(dir_.string(), 3);
    folders.StockUp();
    EXPECT_EQ(folders.spare_count(), 3u);
  }
  WorkloadFolders restarted(dir_.string(), 4);
  EXPECT_EQ(restarted.spare_count(), 3u);
  auto dir = restarted.Prepare("alloc-1");
  ASSERT_TRUE(dir.ok());
  for (const char* file : {kStdoutFile, kStderrFile, kExitStatusFile, kStateFile}) {
    EXPECT_TRUE(fs::exists(*dir + "/" + file)) << file;
  }
  restarted.StockUp();  // two more beside the two that wait, under fresh names
  EXPECT_EQ(restarted.spare_count(), 4u);
  restarted.Retire("alloc-1");  // over the limit: deleted, no spare overwritten
  EXPECT_FALSE(fs::exists(*dir));
  size_t waiting = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_ / ".spare")) ++waiting;
  EXPECT_EQ(waiting, 4u);
}

TEST_F(WorkloadFoldersTest, WriteInPlaceKeepsTheInodeAndAShorterDocumentStillParses) {
  const std::string path = (dir_ / "workload.json").string();
  ASSERT_TRUE(WriteFileInPlace(path, R"({"pid": 123456, "task_id": "long"})").ok());
  const ino_t inode = InodeOf(path);
  ASSERT_TRUE(WriteFileInPlace(path, R"({"pid": 7})").ok());
  EXPECT_EQ(InodeOf(path), inode);
  EXPECT_EQ(nlohmann::json::parse(Read(path)), nlohmann::json({{"pid", 7}}));

  const Status missing = WriteFileInPlace((dir_ / "no/such/file").string(), "{}");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no/such/file"), std::string::npos);
}

TEST_F(WorkloadFoldersTest, OnlyPlainNamesThatDoNotStartWithADotAreWorkloadFolders) {
  EXPECT_TRUE(WorkloadFolders::IsWorkloadFolderName("alloc-1.2"));
  for (const char* bad : {"", ".", "..", ".spare", "a/b", "../x"}) {
    EXPECT_FALSE(WorkloadFolders::IsWorkloadFolderName(bad)) << bad;
  }
  EXPECT_FALSE(WorkloadFolders::IsWorkloadFolderName(std::string(256, 'a')));
}

}  // namespace
}  // namespace det::agent
