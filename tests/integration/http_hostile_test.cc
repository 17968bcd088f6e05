// The master's HTTP server against clients that hold connections: thousands of idle or half-sent
// connections must not keep anyone else waiting and are closed after the header timeout; past the
// caps a connection gets a 503 at once; thousands of parked preemption long polls hold a bounded
// number of threads and each answers when its run is told to stop.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/testing/experiment_fixture.h"
#include "tests/testing/rest_client.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::ExperimentFixture;
using SteadyClock = std::chrono::steady_clock;

// A TCP connection to 127.0.0.1:port from `source` (another loopback address, so that its
// connections count as another peer's), non-blocking once connected; -1 on failure.
int ConnectFrom(const std::string& source, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &local.sin_addr);
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  return fd;
}

void SendAll(int fd, const std::string& text) {
  size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

// What the server sent before closing `fd` (or until `limit`); `closed` says whether it closed.
std::string ReadUntilClosed(int fd, std::chrono::milliseconds limit, bool* closed) {
  std::string got;
  *closed = false;
  const auto deadline = SteadyClock::now() + limit;
  while (SteadyClock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 50);
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      *closed = true;
      return got;
    }
    if (n > 0) got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

// An HTTP answer whose body is one JSON object, read until its closing brace (or `deadline`).
std::string ReadAnswer(int fd, SteadyClock::time_point deadline) {
  std::string got;
  while (SteadyClock::now() < deadline) {
    if (const size_t body = got.find("\r\n\r\n");
        body != std::string::npos && got.find('}', body) != std::string::npos) {
      return got;
    }
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 50);
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return got;
    if (n > 0) got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

int ThreadsOf(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Threads:")) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

class HttpHostileTest : public ExperimentFixture {
 protected:
  std::string ExtraConfig() const override {
    return "http:\n  header_timeout: 2s\n  max_connections: 20000\n"
           "  max_connections_per_peer: " +
           std::to_string(PerPeerCap()) + "\n";
  }
  virtual int PerPeerCap() const { return 10000; }
  int port() const { return std::stoi(rest_port_); }
  // GET /api/v1/master on a fresh connection from 127.0.0.1: how long it took (-1: no answer).
  std::chrono::milliseconds TimedMasterInfo() {
    const auto start = SteadyClock::now();
    testing::RestAnswer answer = testing::RestClient(port()).Send("GET", "/api/v1/master", "");
    if (answer.status != 200 || !answer.body.contains("clusterId")) return -1ms;
    return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
  }
};

TEST_F(HttpHostileTest, FiveThousandIdleOrHalfSentConnectionsBlockNobodyAndAreClosedInTime) {
  std::vector<int> stalled;
  for (int i = 0; i < 5000; ++i) {
    const int fd = ConnectFrom("127.0.0.2", port());
    ASSERT_GE(fd, 0) << "connection " << i << ": " << std::strerror(errno);
    if (i % 2 == 0) SendAll(fd, "GET /api/v1/mas");  // half a request line, then nothing
    stalled.push_back(fd);
  }
  const auto opened = SteadyClock::now();
  // Legitimate requests keep answering while all of them are open.
  for (int i = 0; i < 20; ++i) {
    const auto took = TimedMasterInfo();
    ASSERT_GE(took.count(), 0) << "no answer with 5,000 stalled connections open";
    EXPECT_LT(took, 2000ms) << "request " << i;
  }
  // Each stalled connection is closed once its header timeout (2 s) is up.
  int closed_in_time = 0;
  for (int fd : stalled) {
    bool closed = false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(opened + 6s - SteadyClock::now());
    ReadUntilClosed(fd, std::max(left, 1ms), &closed);
    closed_in_time += closed;
    ::close(fd);
  }
  EXPECT_EQ(closed_in_time, 5000);
  EXPECT_GE(TimedMasterInfo().count(), 0) << "and the master still answers";
}

class HttpCapTest : public HttpHostileTest {
 protected:
  int PerPeerCap() const override { return 50; }
};

TEST_F(HttpCapTest, PastTheCapAConnectionIsAnswered503AtOnceAndLogged) {
  std::vector<int> held;
  for (int i = 0; i < 50; ++i) held.push_back(ConnectFrom("127.0.0.3", port()));
  const int extra = ConnectFrom("127.0.0.3", port());
  ASSERT_GE(extra, 0);
  bool closed = false;
  const std::string answer = ReadUntilClosed(extra, 1000ms, &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 503")) << answer;
  EXPECT_NE(answer.find("50 connections are open from 127.0.0.3 (http.max_connections_per_peer)"),
            std::string::npos)
      << answer;
  EXPECT_TRUE(closed);
  ::close(extra);
  EXPECT_GE(TimedMasterInfo().count(), 0) << "another address is served";
  EXPECT_TRUE(WaitForLog("master.log", "refused a connection from 127.0.0.3"));
  for (int fd : held) ::close(fd);
}

TEST_F(HttpHostileTest, TwoThousandParkedLongPollsHoldNoThreadAndAnswerWhenTheRunIsTold) {
  auto agent = StartAgent("agent-poll");
  const fs::path env = dir_ / "run.env";
  const int64_t id = Create(Config("const.yaml", [&](YAML::Node& config) {
    // Like a trial that checkpoints before it exits, the run outlives the pause's SIGTERM (by
    // the kill's grace), so its polls are answered "preempt", not "no such run".
    config["entrypoint"] = "trap '' TERM; env > " + env.string() + ".tmp && mv " + env.string() +
                           ".tmp " + env.string() + " && sleep 600";
  }));
  ASSERT_GT(id, 0);
  std::string token, allocation;
  for (int i = 0; i < 300 && (token.empty() || allocation.empty()); ++i) {
    std::ifstream in(env);
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("DET_SESSION_TOKEN=")) token = line.substr(18);
      if (line.starts_with("DET_ALLOCATION_ID=")) allocation = line.substr(18);
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(token.empty()) << "the run did not start: " << Log("master.log");
  const pid_t master_pid = master_->pid();
  const int threads_before = ThreadsOf(master_pid);
  const std::string poll = "GET /api/v1/allocations/" + allocation +
                           "/signals/preemption?timeout_seconds=120 HTTP/1.1\r\nHost: x\r\n"
                           "Authorization: Bearer " +
                           token + "\r\n\r\n";
  std::vector<int> polls;
  for (int i = 0; i < 2000; ++i) {
    const int fd = ConnectFrom("127.0.0.4", port());
    ASSERT_GE(fd, 0) << std::strerror(errno);
    SendAll(fd, poll);
    polls.push_back(fd);
  }
  std::this_thread::sleep_for(2s);  // every poll read and parked
  const int threads_parked = ThreadsOf(master_pid);
  EXPECT_LE(threads_parked, threads_before + 4)
      << "parked polls must not take a thread each (" << threads_before << " before)";
  const auto paused_at = SteadyClock::now();
  Det("experiment pause " + std::to_string(id));
  int told = 0;
  for (size_t i = 0; i < polls.size(); ++i) {
    const std::string answer = ReadAnswer(polls[i], paused_at + 20s);
    const bool was_told = answer.find("\"preempt\":true") != std::string::npos;
    if (!was_told && told == static_cast<int>(i)) ADD_FAILURE() << "poll " << i << ": " << answer;
    told += was_told;
    ::close(polls[i]);
  }
  const auto all_told = SteadyClock::now() - paused_at;
  EXPECT_LT(all_told, 10s) << "from the pause to the last poll answered";
  EXPECT_EQ(told, 2000) << Log("master.log").substr(0, 6000);
}

}  // namespace
}  // namespace det
