// The fake Cloud Storage (served by `fake-gce`) checked with the real `gcloud storage` (Debian
// package google-cloud-cli): a service account key activated against the fake's token endpoint,
// then buckets, multipart and resumable uploads (one PUT, and a stream from stdin in chunks
// answered 308), plain and sliced (parallel ranged) downloads, `cat`, listings over several pages,
// `rm -r`, revoked tokens and an injected refusal work against it as against Cloud Storage.
// gcloud runs one process and one thread (but for the sliced download), parallel composite
// uploads off, a fresh configuration per test (its resumable tracker files included).
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "tests/testing/fake_cloud_process.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class FakeGcsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-fake-gcs-cli-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const testing::CommandOutput& version = testing::GcloudVersion();
    if (version.exit_code != 0) {
      GTEST_SKIP() << "gcloud is needed (Debian package google-cloud-cli): " << version.output;
    }
    // Pages of 2: five objects are listed in three.
    fake_ = std::make_unique<testing::FakeGceProcess>(
        dir_, false, std::vector<std::string>{"--gcs-page-size", "2", "--gcs-bucket", "ckpt"});
    ASSERT_GT(fake_->port(), 0) << "fake-gce did not start";
    const testing::CommandOutput activated =
        Gcloud("auth activate-service-account --key-file " + fake_->key_file().string());
    ASSERT_EQ(activated.exit_code, 0) << activated.output;
  }
  void TearDown() override {
    fake_.reset();
    fs::remove_all(dir_);
  }
  // `gcloud <args>` against the fake's storage endpoint; `env` ("NAME=value ...") adds to or
  // overrides the defaults.
  testing::CommandOutput Gcloud(const std::string& args, const std::string& env = "") {
    return testing::RunGcloud(
        dir_ / "gcloud-config", fake_->compute_endpoint(), args, {},
        "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=" + fake_->storage_endpoint() +
            " CLOUDSDK_STORAGE_PROCESS_COUNT=1 CLOUDSDK_STORAGE_THREAD_COUNT=1"
            " CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED=False " +
            env);
  }
  // The same, EXPECTing success.
  testing::CommandOutput GcloudOk(const std::string& args, const std::string& env = "") {
    testing::CommandOutput out = Gcloud(args, env);
    EXPECT_EQ(out.exit_code, 0) << args << "\n" << out.output;
    return out;
  }
  std::vector<std::string> Names(const std::string& bucket, const std::string& prefix = "") {
    std::vector<std::string> names;
    for (const json& object : fake_->Admin("gcs/objects?bucket=" + bucket + "&prefix=" + prefix)) {
      names.push_back(object["name"]);
    }
    return names;
  }
  // The calls of `method` so far, and those on `path` when it is given.
  int Calls(const std::string& method, const std::string& path = "") {
    int count = 0;
    for (const json& call : fake_->Admin("calls")) {
      count += call["method"] == method && (path.empty() || call["path"] == path) ? 1 : 0;
    }
    return count;
  }
  fs::path RandomFile(const std::string& name, size_t size) {
    return testing::WriteRandomFile(dir_ / name, size);
  }
  static std::string Slurp(const fs::path& file) { return testing::ReadWholeFile(file); }

  fs::path dir_;
  std::unique_ptr<testing::FakeGceProcess> fake_;
};

TEST_F(FakeGcsCliTest, BucketsAndSmallObjectsWorkWithGcloudStorage) {
  GcloudOk("storage buckets create gs://more");
  const std::string buckets = GcloudOk("storage ls").output;
  EXPECT_NE(buckets.find("gs://ckpt/"), std::string::npos) << buckets;
  EXPECT_NE(buckets.find("gs://more/"), std::string::npos) << buckets;
  const testing::CommandOutput again = Gcloud("storage buckets create gs://more");
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.output.find("409"), std::string::npos) << again.output;

  // A name with '/', a space and a '+': sent as %2F, %20 and %2B, decoded once.
  const fs::path small = RandomFile("small.bin", 3000);
  GcloudOk("storage cp " + small.string() + " 'gs://ckpt/exp/a b+c/small.bin'");
  EXPECT_EQ(Names("ckpt"), std::vector<std::string>{"exp/a b+c/small.bin"});
  EXPECT_EQ(Calls("objects.insert", "/upload/storage/v1/b/ckpt/o"), 1) << "one multipart upload";
  EXPECT_EQ(Calls("objects.insert.chunk"), 0);
  GcloudOk("storage cp 'gs://ckpt/exp/a b+c/small.bin' " + (dir_ / "back.bin").string());
  EXPECT_EQ(Slurp(dir_ / "back.bin"), Slurp(small));

  // text/plain: served as it is, never compressed (gcloud reads media raw and counts its bytes).
  std::ofstream(dir_ / "state.txt") << "step 7\n";
  GcloudOk("storage cp " + (dir_ / "state.txt").string() + " gs://ckpt/exp/state.txt");
  EXPECT_EQ(GcloudOk("storage cat gs://ckpt/exp/state.txt").output, "step 7\n");
}

TEST_F(FakeGcsCliTest, LargeFilesGoUpResumableAndComeDownInSlices) {
  const fs::path big = RandomFile("big.bin", 12 << 20);
  GcloudOk("storage cp " + big.string() + " gs://ckpt/exp/big.bin",
           "CLOUDSDK_STORAGE_RESUMABLE_THRESHOLD=1MiB");
  EXPECT_EQ(Calls("objects.insert", "/resumable/upload/storage/v1/b/ckpt/o"), 1);
  EXPECT_GE(Calls("objects.insert.chunk"), 1);
  EXPECT_EQ(Names("ckpt"), std::vector<std::string>{"exp/big.bin"});

  // Slices of 2 MiB fetched by 4 threads: one metadata get, six ranged media gets at least.
  const int gets = Calls("objects.get");
  GcloudOk("storage cp gs://ckpt/exp/big.bin " + (dir_ / "big.back").string(),
           "CLOUDSDK_STORAGE_THREAD_COUNT=4 CLOUDSDK_STORAGE_SLICED_OBJECT_DOWNLOAD_THRESHOLD=1MiB "
           "CLOUDSDK_STORAGE_SLICED_OBJECT_DOWNLOAD_COMPONENT_SIZE=2MiB");
  EXPECT_GE(Calls("objects.get") - gets, 7) << "a sliced download";
  EXPECT_TRUE(Slurp(dir_ / "big.back") == Slurp(big)) << "the bytes came back changed";

  // From stdin, in chunks of 256 KiB: each but the last answered 308 with the Range stored.
  const int chunks = Calls("objects.insert.chunk");
  GcloudOk("storage cp - gs://ckpt/exp/stream.bin < " + big.string(),
           "CLOUDSDK_STORAGE_UPLOAD_CHUNK_SIZE=256Ki");
  EXPECT_GE(Calls("objects.insert.chunk") - chunks, 48);
  const testing::CommandOutput streamed = GcloudOk("storage cat gs://ckpt/exp/stream.bin");
  EXPECT_TRUE(streamed.output == Slurp(big)) << "the streamed upload's bytes changed";
}

TEST_F(FakeGcsCliTest, ListingsFollowPagesAndRmRecursiveEmptiesAPrefix) {
  std::string files;
  for (int i = 1; i <= 5; ++i) {
    std::ofstream(dir_ / ("f" + std::to_string(i))) << i << "\n";
    files += (dir_ / ("f" + std::to_string(i))).string() + " ";
  }
  GcloudOk("storage cp " + files + "gs://ckpt/five/");
  std::ofstream(dir_ / "keep") << "kept\n";
  GcloudOk("storage cp " + (dir_ / "keep").string() + " gs://ckpt/fivefold/keep");

  const int lists = Calls("objects.list");
  const std::string listed = GcloudOk("storage ls gs://ckpt/five/").output;
  for (int i = 1; i <= 5; ++i) {
    EXPECT_NE(listed.find("gs://ckpt/five/f" + std::to_string(i) + "\n"), std::string::npos)
        << listed;
  }
  EXPECT_EQ(listed.find("fivefold"), std::string::npos) << listed;
  EXPECT_GE(Calls("objects.list") - lists, 3) << "five objects in pages of two";
  const std::string top = GcloudOk("storage ls gs://ckpt").output;
  EXPECT_EQ(top, "gs://ckpt/five/\ngs://ckpt/fivefold/\n");

  GcloudOk("storage rm -r gs://ckpt/five");
  EXPECT_TRUE(Names("ckpt", "five/").empty());
  EXPECT_EQ(Names("ckpt"), std::vector<std::string>{"fivefold/keep"});
  EXPECT_EQ(Calls("objects.delete"), 5);
}

TEST_F(FakeGcsCliTest, RevokedTokensAndARefusedDeleteFailGcloud) {
  std::ofstream(dir_ / "state.txt") << "step 7\n";
  GcloudOk("storage cp " + (dir_ / "state.txt").string() + " gs://ckpt/exp/state.txt");

  // gcloud refreshes its token on a 401 but sends the call again with the old one.
  fake_->Admin("revoke_tokens", json::object());
  const testing::CommandOutput revoked = Gcloud("storage ls gs://ckpt/exp/");
  EXPECT_NE(revoked.exit_code, 0);
  EXPECT_NE(revoked.output.find("HTTPError 401: Invalid Credentials"), std::string::npos)
      << revoked.output;

  fake_->Admin(
      "fault",
      {{"method", "objects.delete"}, {"status", 403}, {"reason", "forbidden"}, {"times", 10}});
  const testing::CommandOutput refused =
      Gcloud("storage rm -r gs://ckpt/exp",
             "CLOUDSDK_STORAGE_MAX_RETRIES=1 CLOUDSDK_STORAGE_BASE_RETRY_DELAY=0");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("HTTPError 403: scripted fault: forbidden"), std::string::npos)
      << refused.output;
  EXPECT_EQ(Names("ckpt"), std::vector<std::string>{"exp/state.txt"});
}

}  // namespace
}  // namespace det
