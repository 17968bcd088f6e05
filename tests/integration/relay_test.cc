// det's relay (cli/relay.h) with a real master and real det processes: the first call starts a
// relay, the next ones go through it; det prefers whatever answers at the relay's socket, goes to
// the master itself when that ends without answering; an idle relay ends; DET_RELAY=0 starts none.
#include "cli/relay.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bus/catalog/master.h"
#include "bus/codec.h"
#include "cli/relay_frames.h"
#include "tests/testing/cluster_fixture.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::Shell;

// The pid of the relay serving `path` (a det process whose command line names it), or -1.
pid_t RelayPid(const std::string& path) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(line.begin(), line.end(), '\0', ' ');
    if (line.find(std::string(cli::kRelayArg) + " " + path + " ") != std::string::npos) {
      return std::stoi(name);
    }
  }
  return -1;
}

int Connect(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// One whole frame from `fd` (blocking), or nullopt at its end.
std::optional<std::string> ReadFrame(int fd) {
  std::string buffer;
  char chunk[4096];
  bool too_large = false;
  while (true) {
    if (auto frame = cli::TakeRelayFrame(buffer, &too_large)) return frame;
    const ssize_t got = recv(fd, chunk, sizeof chunk, 0);
    if (got <= 0) return std::nullopt;
    buffer.append(chunk, static_cast<size_t>(got));
  }
}

// A listening socket at `path` standing in for a relay.
class FakeRelay {
 public:
  explicit FakeRelay(const std::string& path) : path_(path) {
    fs::remove(path);
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
             listen(fd_, 4) == 0;
    const timeval limit{20, 0};  // a det that never comes fails the test rather than hanging it
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  }
  ~FakeRelay() {
    close(fd_);
    fs::remove(path_);
  }
  bool bound() const { return bound_; }
  // Takes one call and answers it with `answer` (or, when null, ends the connection unanswered).
  // The request it read.
  std::optional<bus::RpcRequest> ServeOne(const std::optional<bus::MasterInfo>& answer) {
    const int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return std::nullopt;
    std::optional<bus::RpcRequest> request;
    if (auto frame = ReadFrame(client)) {
      if (auto decoded = bus::Decode<bus::RpcRequest>(*frame); decoded.ok()) request = *decoded;
    }
    if (request && answer) {
      bus::RpcReply reply;
      reply.request_id = request->request_id;
      reply.body.data = bus::Encode(*answer);
      const std::string frame = cli::RelayFrame(bus::Encode(reply));
      (void)!send(client, frame.data(), frame.size(), MSG_NOSIGNAL);
    }
    close(client);
    return request;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

class RelayTest : public testing::ClusterProcessTest {
 protected:
  // The relay the fixture's det calls use (plaintext, this master's gateway).
  std::string Path() const { return cli::RelaySocketPath({gateway_, {}}); }
  void TearDown() override {
    if (const pid_t relay = RelayPid(Path()); relay > 0) kill(relay, SIGTERM);
    ClusterProcessTest::TearDown();
  }
};

TEST_F(RelayTest, TheFirstCallStartsARelayAndTheNextOnesGoThroughIt) {
  const std::string path = Path();
  ASSERT_FALSE(path.empty()) << "no private folder for relays";
  ASSERT_EQ(RelayPid(path), -1);
  const std::string first = Det("master info");
  ASSERT_NE(first.find("version:"), std::string::npos) << first;
  pid_t relay = -1;
  ASSERT_TRUE(testing::Eventually([&] { return (relay = RelayPid(path)) > 0; }, 10s));
  // A det's request, sent to the relay's socket as det sends it: the master's own answer.
  const int fd = Connect(path);
  ASSERT_GE(fd, 0) << "nothing listens at " << path;
  const bus::RpcRequest request{bus::RandomId(),
                                "",
                                std::string(bus::MasterInfoRequest::kType),
                                {bus::Encode(bus::MasterInfoRequest{})}};
  const std::string frame = cli::RelayFrame(bus::Encode(request));
  ASSERT_EQ(send(fd, frame.data(), frame.size(), MSG_NOSIGNAL), static_cast<ssize_t>(frame.size()));
  const std::optional<std::string> answer = ReadFrame(fd);
  close(fd);
  ASSERT_TRUE(answer.has_value()) << "the relay ended without answering";
  auto reply = bus::Decode<bus::RpcReply>(*answer);
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(reply->request_id, request.request_id);
  EXPECT_EQ(reply->code, 0) << reply->error;
  auto info = bus::Decode<bus::MasterInfo>(reply->body.data);
  ASSERT_TRUE(info.ok());
  EXPECT_NE(first.find(info->master_id), std::string::npos) << "not this master's answer";
  // The next det calls: answered, and still one relay.
  for (int i = 0; i < 3; ++i) {
    const std::string again = Det("master info");
    EXPECT_NE(again.find(info->master_id), std::string::npos) << again;
  }
  EXPECT_EQ(RelayPid(path), relay);
}

TEST_F(RelayTest, DetAsksWhateverAnswersAtTheRelaysSocketFirst) {
  FakeRelay fake(Path());
  ASSERT_TRUE(fake.bound());
  bus::MasterInfo answer;
  answer.version = "answered-by-the-test";
  std::optional<bus::RpcRequest> seen;
  std::thread serve([&] { seen = fake.ServeOne(answer); });
  const std::string out = Det("master info");
  serve.join();
  EXPECT_NE(out.find("version:    answered-by-the-test"), std::string::npos) << out;
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->method, bus::MasterInfoRequest::kType);
  EXPECT_EQ(seen->request_id.size(), 32u);
}

TEST_F(RelayTest, ARelayThatEndsWithoutAnsweringLeavesTheCallToDet) {
  FakeRelay fake(Path());
  ASSERT_TRUE(fake.bound());
  std::optional<bus::RpcRequest> seen;
  std::thread serve([&] { seen = fake.ServeOne(std::nullopt); });
  const std::string out = Det("master info");
  serve.join();
  EXPECT_TRUE(seen.has_value()) << "det did not try the relay first";
  EXPECT_NE(out.find("cluster id:"), std::string::npos) << out;
}

TEST_F(RelayTest, AnIdleRelayEndsAndRemovesItsSocket) {
  const std::string path = Path();
  const std::string out = Shell(
      DetCommand("DET_RELAY_IDLE=1 DET_USER=admin DET_PASS=" + std::string(testing::kAdminPassword),
                 "master info"));
  ASSERT_NE(out.find("version:"), std::string::npos) << out;
  ASSERT_TRUE(testing::Eventually([&] { return RelayPid(path) > 0; }, 10s));
  EXPECT_TRUE(testing::Eventually([&] { return RelayPid(path) < 0 && !fs::exists(path); }, 15s));
}

TEST_F(RelayTest, DetRelay0StartsNone) {
  const std::string out = Shell(DetCommand("DET_RELAY=0", "master info"));
  ASSERT_NE(out.find("version:"), std::string::npos) << out;
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(RelayPid(Path()), -1);
  EXPECT_FALSE(fs::exists(Path()));
}

}  // namespace
}  // namespace det
