// A checkpoint streamed as a gzipped tar (what GET /checkpoints/{uuid} sends): read from a
// shared_fs folder and from buckets (the fake S3 and GCS, with ranged reads), in bounded pieces,
// read back whole; a file that changes while it is sent breaks the archive off.
#include "master/experiments/checkpoint_archive.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "bus/rpc_client.h"
#include "master/experiments/model_files.h"
#include "object_store/gcs_client.h"
#include "object_store/s3_client.h"
#include "tests/fakes/fake_gce.h"
#include "tests/fakes/fake_s3.h"

namespace det {
namespace {

namespace fs = std::filesystem;
using master::CheckpointArchive;
using Files = std::map<std::string, std::string>;  // path -> content

constexpr const char* kUuid = "0b5e3e10-52c1-4c5b-8a3e-9a0c5d1e2f3a";
// Small pieces, three read at a time: a file of several pieces, read out of order, comes back in
// order.
constexpr master::CheckpointReadAhead::Options kPieces{64 << 10, 3};

std::string RandomBytes(size_t size, unsigned seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random() & 0xff);
  return bytes;
}

// A checkpoint's kinds of file: small text, a large incompressible one (several read pieces and
// not a whole number of them), an empty one, a nested path with a space.
Files SampleCheckpoint() {
  return {{"metadata.json", R"({"steps_completed": 10})"},
          {"model/state.bin", RandomBytes(5 * kPieces.piece + 12345, 7)},
          {"empty.txt", ""},
          {"logs/run 1.txt", std::string(100000, 'x')}};
}

struct Streamed {
  std::string tar_gz;
  size_t largest_piece = 0;
  Status error = Status::Ok();
};

Streamed StreamAll(const master::experiment::CheckpointStorage& storage,
                   const object_store::BucketOpener& open = object_store::OpenBucket) {
  Streamed out;
  auto reader = master::OpenCheckpointFiles(storage, kUuid, open);
  if (!reader.ok()) return {"", 0, reader.status()};
  auto files = (*reader)->List();
  if (!files.ok()) return {"", 0, files.status()};
  CheckpointArchive archive((*reader)->Where(),
                            [&] { return master::OpenCheckpointFiles(storage, kUuid, open); },
                            std::move(*files), kPieces);
  for (;;) {
    auto piece = archive.Next();
    if (!piece.ok()) return {out.tar_gz, out.largest_piece, piece.status()};
    out.largest_piece = std::max(out.largest_piece, piece->data.size());
    out.tar_gz += piece->data;
    if (piece->done) return out;
  }
}

// The paths of `files` and their sizes, to show where two checkpoints differ.
std::vector<std::string> Listing(const Files& files) {
  std::vector<std::string> listing;
  for (const auto& [path, content] : files) {
    listing.push_back(path + " (" + std::to_string(content.size()) + " bytes)");
  }
  return listing;
}

// Whether the archive holds exactly `expected`, byte for byte (the listings when it does not).
void ExpectSameFiles(const Files& got, const Files& expected) {
  EXPECT_EQ(Listing(got), Listing(expected));
  EXPECT_TRUE(got == expected) << "the same files with other bytes";
}

Files ReadBack(const std::string& tar_gz) {
  auto entries = master::experiments::ReadModelFiles(tar_gz, true);
  EXPECT_TRUE(entries.ok()) << entries.status().ToString();
  Files files;
  if (entries.ok()) {
    for (const auto& entry : *entries) files[entry.path] = entry.content;
  }
  return files;
}

class CheckpointFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_);
    storage_.host_path = dir_.string();
    storage_.storage_path = "det";
    for (const auto& [path, content] : SampleCheckpoint()) Write(path, content);
  }
  void Write(const std::string& path, const std::string& content) {
    const fs::path file = Folder() / path;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << content;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Folder() const { return dir_ / "det" / kUuid; }

  const fs::path dir_ = fs::temp_directory_path() / ("det-ckpt-archive-" + bus::RandomId());
  master::experiment::CheckpointStorage storage_;
};

TEST_F(CheckpointFolderTest, EveryFileComesBackWholeFromPiecesOfBoundedSize) {
  Streamed streamed = StreamAll(storage_);
  ASSERT_TRUE(streamed.error.ok()) << streamed.error.ToString();
  ExpectSameFiles(ReadBack(streamed.tar_gz), SampleCheckpoint());
  EXPECT_LE(streamed.largest_piece, 2 * kPieces.piece)
      << "a piece holds about one read, never the checkpoint";
}

TEST_F(CheckpointFolderTest, LinksAreLeftOutWhereverTheyPoint) {
  // Trial code wrote the folder: a link must not hand out a file the master can read.
  const fs::path secret = dir_ / "master-only.key";
  std::ofstream(secret) << "secret";
  fs::create_symlink(secret, Folder() / "key.pem");
  fs::create_directory_symlink(dir_, Folder() / "everything");
  Streamed streamed = StreamAll(storage_);
  ASSERT_TRUE(streamed.error.ok()) << streamed.error.ToString();
  ExpectSameFiles(ReadBack(streamed.tar_gz), SampleCheckpoint());
}

TEST_F(CheckpointFolderTest, AFileThatShrinksWhileSentBreaksTheArchiveOff) {
  auto reader = master::OpenCheckpointFiles(storage_, kUuid);
  ASSERT_TRUE(reader.ok());
  auto files = (*reader)->List();
  ASSERT_TRUE(files.ok());
  Write("model/state.bin", "short now");  // after the listing, before the sending
  CheckpointArchive archive((*reader)->Where(),
                            [&] { return master::OpenCheckpointFiles(storage_, kUuid); },
                            std::move(*files), kPieces);
  Status error = Status::Ok();
  for (int i = 0; i < 100 && error.ok(); ++i) {
    auto piece = archive.Next();
    if (!piece.ok()) error = piece.status();
    ASSERT_FALSE(piece.ok() && piece->done) << "the archive must not end as if complete";
  }
  EXPECT_NE(error.message().find("model/state.bin"), std::string::npos) << error.ToString();
  EXPECT_NE(error.message().find("changed during the download"), std::string::npos);
}

TEST_F(CheckpointFolderTest, AFolderTheMasterDoesNotSeeSaysWhereToDownloadInstead) {
  storage_.host_path = (dir_ / "not-mounted").string();
  Streamed streamed = StreamAll(storage_);
  EXPECT_EQ(streamed.error.code(), StatusCode::kNotFound);
  EXPECT_NE(streamed.error.message().find("mode DIRECT"), std::string::npos)
      << streamed.error.ToString();
}

TEST(CheckpointFilesTest, AUuidThatIsAPathIsRefused) {
  master::experiment::CheckpointStorage storage;
  storage.host_path = "/tmp";
  for (const char* uuid : {"", "../etc", "a/b"}) {
    EXPECT_EQ(master::OpenCheckpointFiles(storage, uuid).status().code(),
              StatusCode::kInvalidArgument)
        << uuid;
  }
}

TEST(CheckpointBucketTest, AnS3CheckpointComesBackWholeWithoutItsNeighboursOrEscapingKeys) {
  testing::FakeS3 fake({});
  fake.Start();
  for (const auto& [path, content] : SampleCheckpoint()) {
    fake.Put("ckpt", std::string("team/") + kUuid + "/" + path, content);
  }
  fake.Put("ckpt", "team/other-uuid/metadata.json", "{}");
  // A key no archive may name (the client would extract it outside its folder).
  fake.Put("ckpt", std::string("team/") + kUuid + "/../../escape.txt", "x");
  RealClock clock;
  SimulatedClock waits{SimulatedClock::Sleeps::kSleepAdvances};
  master::experiment::CheckpointStorage storage;
  storage.type = "s3";
  storage.bucket = "ckpt";
  storage.prefix = "/team/";
  storage.endpoint_url = fake.endpoint();
  auto open = [&](const object_store::BucketSpec& spec)
      -> Result<std::unique_ptr<object_store::ObjectStore>> {
    object_store::S3ClientOptions options;
    options.bucket = spec.bucket;
    options.endpoint_url = spec.endpoint_url;
    return std::unique_ptr<object_store::ObjectStore>(new object_store::S3Client(
        options,
        std::make_shared<aws::CredentialsChain>(
            aws::AwsEnvironment::Of(
                {{"AWS_ACCESS_KEY_ID", "AKIDFAKE"}, {"AWS_SECRET_ACCESS_KEY", "fake-secret"}}),
            nullptr, clock),
        waits));
  };
  Streamed streamed = StreamAll(storage, open);
  ASSERT_TRUE(streamed.error.ok()) << streamed.error.ToString();
  ExpectSameFiles(ReadBack(streamed.tar_gz), SampleCheckpoint());
  EXPECT_LE(streamed.largest_piece, 2 * kPieces.piece);
}

TEST(CheckpointBucketTest, AGcsCheckpointComesBackWhole) {
  testing::FakeGce fake({});
  fake.Start();
  fake.CreateBucket("ckpt");
  for (const auto& [path, content] : SampleCheckpoint()) {
    fake.PutObject("ckpt", std::string(kUuid) + "/" + path, content);
  }
  RealClock clock;
  SimulatedClock waits{SimulatedClock::Sleeps::kSleepAdvances};
  auto key = gcp::ParseServiceAccountKey(fake.ServiceAccountKey().dump());
  ASSERT_TRUE(key.ok());
  auto credentials = std::make_shared<gcp::GcpCredentials>(
      std::make_unique<gcp::ServiceAccountTokenSource>(*key, "test", clock), clock);
  master::experiment::CheckpointStorage storage;
  storage.type = "gcs";
  storage.bucket = "ckpt";
  auto open = [&](const object_store::BucketSpec& spec)
      -> Result<std::unique_ptr<object_store::ObjectStore>> {
    object_store::GcsClientOptions options;
    options.bucket = spec.bucket;
    options.endpoint_url = fake.base_url();
    return std::unique_ptr<object_store::ObjectStore>(
        new object_store::GcsClient(options, credentials, waits));
  };
  Streamed streamed = StreamAll(storage, open);
  ASSERT_TRUE(streamed.error.ok()) << streamed.error.ToString();
  ExpectSameFiles(ReadBack(streamed.tar_gz), SampleCheckpoint());
}

TEST(ObjectRangeTest, ARangedAnswerIsTakenAsItIsAndAWholeOneIsCutToTheRange) {
  EXPECT_EQ(object_store::ByteRange(0, 1), "bytes=0-0");
  EXPECT_EQ(object_store::ByteRange(1048576, 1048576), "bytes=1048576-2097151");
  EXPECT_EQ(object_store::PieceOfAnswer(206, "cdef", 2, 4), "cdef");
  // A server that ignores Range sends the whole object (200).
  EXPECT_EQ(object_store::PieceOfAnswer(200, "abcdefgh", 2, 4), "cdef");
  EXPECT_EQ(object_store::PieceOfAnswer(200, "abcdefgh", 6, 4), "gh");
  EXPECT_EQ(object_store::PieceOfAnswer(200, "abcdefgh", 8, 4), "");
}

}  // namespace
}  // namespace det
