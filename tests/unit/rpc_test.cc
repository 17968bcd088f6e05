// The request/reply gateway: ROUTER server, Lazy Pirate REQ client.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "bus/catalog/agent.h"
#include "bus/catalog/master.h"
#include "bus/rpc_client.h"
#include "bus/rpc_server.h"
#include "tests/testing/test_util.h"

namespace det::bus {
namespace {

using namespace std::chrono_literals;

// Runs an RpcServer on its own thread; `ignore_first` requests are read and left unanswered (a
// lost reply, as the client sees it).
class ServerThread {
 public:
  ServerThread(zmq::context_t& context, const std::string& endpoint, int ignore_first = 0)
      : server_(context, "test", RealClock::Instance()), ignore_(ignore_first) {
    server_.Handle<AgentPing, AgentEcho>([this](const RpcContext& ctx, const AgentPing& ping) {
      ++executions;
      std::lock_guard lock(mu_);
      last_token_ = ctx.token;
      last_client_key_ = ctx.client_key;
      return AgentEcho{ping.nonce};
    });
    server_.Handle<MasterInfoRequest, MasterInfo>(
        [](const RpcContext&, const MasterInfoRequest&) -> Result<MasterInfo> {
          return NotFound("no such thing");
        });
    bound = *server_.Bind(endpoint, {});
    thread_ = std::thread([this] { Run(); });
  }
  ~ServerThread() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // The bytes of replies it keeps for retries (after Stop()).
  size_t remembered_bytes() const { return server_.remembered_bytes(); }
  std::string bound;
  std::atomic<int> executions{0};
  // The token of the last request handled. (Guarded: a reply over zmq orders the handler's write
  // before the caller's read, but TSan cannot see into libzmq.)
  std::string last_token() {
    std::lock_guard lock(mu_);
    return last_token_;
  }
  std::string last_client_key() {
    std::lock_guard lock(mu_);
    return last_client_key_;
  }

 private:
  void Run() {
    while (!stop_) {
      zmq::pollitem_t item{server_.socket().handle(), 0, ZMQ_POLLIN, 0};
      Poll(&item, 1, 10ms);
      if (!(item.revents & ZMQ_POLLIN)) continue;
      if (ignore_ > 0) {
        std::vector<zmq::message_t> frames;
        ReceiveFrames(server_.socket(), &frames);
        --ignore_;
        continue;
      }
      server_.Receive();
    }
  }
  std::mutex mu_;
  std::string last_token_;       // guarded by mu_
  std::string last_client_key_;  // guarded by mu_
  RpcServer server_;
  int ignore_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class RpcTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string Endpoint() {
    return GetParam() == "tcp" ? "tcp://127.0.0.1:0" : det::testing::InprocEndpoint("rpc");
  }
  zmq::context_t context_;
};

TEST_P(RpcTest, TypedCallRoundTrips) {
  ServerThread server(context_, Endpoint());
  RpcClient client(context_, server.bound, {});
  auto echo = client.Call<AgentPing, AgentEcho>(AgentPing{"hi"}, "tok");
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo->nonce, "hi");
  EXPECT_EQ(server.last_token(), "tok");
  EXPECT_EQ(server.last_client_key(), "") << "no CURVE, no client key";
}

TEST_P(RpcTest, HandlerErrorComesBackAsStatus) {
  ServerThread server(context_, Endpoint());
  RpcClient client(context_, server.bound, {});
  auto info = client.Call<MasterInfoRequest, MasterInfo>({});
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(info.status().message(), "no such thing");
}

TEST_P(RpcTest, UnknownMethodIsNamed) {
  ServerThread server(context_, Endpoint());
  RpcClient client(context_, server.bound, {});
  auto reply = client.CallRaw("no.such.method", {}, "");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().message(), "unknown method \"no.such.method\"");
}

TEST_P(RpcTest, LostReplyIsRetriedOnAFreshSocketAndExecutedOnce) {
  ServerThread server(context_, Endpoint(), /*ignore_first=*/1);
  RpcClient client(context_, server.bound, {}, RpcClientConfig{200ms, 3});
  auto echo = client.Call<AgentPing, AgentEcho>(AgentPing{"retry"});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(client.attempts_made(), 2);
  EXPECT_EQ(server.executions.load(), 1);
}

TEST_P(RpcTest, RepliesKeptForRetriesStayWithinTheirByteBound) {
  ServerThread server(context_, Endpoint());
  RpcClient client(context_, server.bound, {}, RpcClientConfig{5s, 1});
  const std::string big(1 << 20, 'x');  // each reply echoes 1 MiB
  for (int i = 0; i < 48; ++i) {
    auto echo = client.Call<AgentPing, AgentEcho>(AgentPing{big + std::to_string(i)});
    ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  }
  server.Stop();
  EXPECT_GT(server.remembered_bytes(), size_t{16} << 20);  // the latest are kept
  EXPECT_LE(server.remembered_bytes(), RpcServer::kRememberedBytes);
}

TEST_P(RpcTest, NoServerGivesUnavailableAfterAllAttempts) {
  RpcClient client(context_, GetParam() == "tcp" ? "tcp://127.0.0.1:1" : "inproc://nobody", {},
                   RpcClientConfig{50ms, 3});
  auto reply = client.CallRaw("master.info", {}, "");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(client.attempts_made(), 3);
}

INSTANTIATE_TEST_SUITE_P(Transports, RpcTest, ::testing::Values("inproc", "tcp"));

// Serves `server` on a thread of its own until `stop`, sending answers finished elsewhere too.
std::thread ServeAnswersToo(RpcServer& server, const std::atomic<bool>& stop) {
  return std::thread([&server, &stop] {
    while (!stop) {
      zmq::pollitem_t items[] = {{server.socket().handle(), 0, ZMQ_POLLIN, 0},
                                 {nullptr, server.answers_fd(), ZMQ_POLLIN, 0}};
      Poll(items, 2, 10ms);
      if ((items[0].revents | items[1].revents) & ZMQ_POLLIN) server.Receive();
    }
  });
}

// An RpcServer whose handlers run on worker threads: AgentPing "slow" runs for `slow_for` or
// until ReleaseSlow(), whichever comes first.
class WorkerServer {
 public:
  WorkerServer(zmq::context_t& context, std::chrono::milliseconds slow_for)
      : server_(context, "test", RealClock::Instance()) {
    server_.RunHandlersOn(4);
    server_.Handle<AgentPing, AgentEcho>(
        [this, slow_for](const RpcContext&, const AgentPing& ping) {
          ++executions;
          if (ping.nonce == "slow") {
            slow_running = true;
            std::unique_lock lock(mu_);
            release_.wait_for(lock, slow_for, [&] { return released_; });
            slow_running = false;
          }
          return AgentEcho{ping.nonce};
        });
    bound = *server_.Bind("tcp://127.0.0.1:0", {});
    thread_ = ServeAnswersToo(server_, stop_);
  }
  ~WorkerServer() {
    stop_ = true;
    thread_.join();
  }
  void ReleaseSlow() {
    std::lock_guard lock(mu_);
    released_ = true;
    release_.notify_all();
  }
  std::string bound;
  std::atomic<int> executions{0};
  std::atomic<bool> slow_running{false};

 private:
  RpcServer server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable release_;
  bool released_ = false;
};

// Determined's CLI takes a task id only in this form (cli/ntsc.py's TASK_ID_REGEX).
TEST(RandomUuidTest, IsAVersion4UuidAndDiffersEachTime) {
  const std::regex uuid("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = RandomUuid();
    ASSERT_TRUE(std::regex_match(id, uuid)) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(RpcWorkersTest, ASlowMethodHoldsNoOtherCallerUp) {
  zmq::context_t context;
  WorkerServer server(context, 4s);  // until released
  std::thread slow_caller([&] {
    RpcClient client(context, server.bound, {}, RpcClientConfig{5s, 1});
    auto echo = client.Call<AgentPing, AgentEcho>(AgentPing{"slow"});
    EXPECT_TRUE(echo.ok() && echo->nonce == "slow");
  });
  ASSERT_TRUE(det::testing::WaitFor([&] { return server.slow_running.load(); }));
  RpcClient client(context, server.bound, {});
  auto echo = client.Call<AgentPing, AgentEcho>(AgentPing{"fast"});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_TRUE(server.slow_running.load()) << "answered while the slow one runs";
  server.ReleaseSlow();
  slow_caller.join();
}

TEST(RpcWorkersTest, ARetryWhileTheMethodRunsGetsItsAnswerWithoutASecondRun) {
  zmq::context_t context;
  WorkerServer server(context, 600ms);
  // The first attempt times out while the method runs; the retry comes on a fresh socket.
  RpcClient client(context, server.bound, {}, RpcClientConfig{400ms, 3});
  auto echo = client.Call<AgentPing, AgentEcho>(AgentPing{"slow"});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo->nonce, "slow");
  EXPECT_EQ(client.attempts_made(), 2);
  EXPECT_EQ(server.executions.load(), 1);
}

// An RpcServer without workers whose AgentPing answers are held until the test releases them;
// AgentPing "bad" fails in its handler.
class HeldServer {
 public:
  explicit HeldServer(zmq::context_t& context) : server_(context, "test", RealClock::Instance()) {
    server_.Handle<AgentPing, AgentEcho>(
        [this](const RpcContext&, const AgentPing& ping) -> Result<AgentEcho> {
          ++executions;
          if (ping.nonce == "bad") return InvalidArgument("bad ping");
          return AgentEcho{ping.nonce};
        },
        [this](RpcServer::Release release) {
          std::lock_guard lock(mu_);
          held_.push_back(std::move(release));
        });
    bound = *server_.Bind("tcp://127.0.0.1:0", {});
    thread_ = ServeAnswersToo(server_, stop_);
  }
  ~HeldServer() {
    stop_ = true;
    thread_.join();
  }
  size_t held() {
    std::lock_guard lock(mu_);
    return held_.size();
  }
  // Releases every held answer with `stored`, from this (another) thread.
  void ReleaseAll(const Status& stored) {
    std::vector<RpcServer::Release> held;
    {
      std::lock_guard lock(mu_);
      held.swap(held_);
    }
    for (auto& release : held) release(stored);
  }
  std::string bound;
  std::atomic<int> executions{0};

 private:
  std::mutex mu_;
  std::vector<RpcServer::Release> held_;  // guarded by mu_
  RpcServer server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(RpcHoldTest, AHeldAnswerWaitsForItsReleaseAndARetryGetsItWithoutASecondRun) {
  zmq::context_t context;
  HeldServer server(context);
  std::atomic<bool> released{false};
  std::atomic<bool> answered_before_release{false};
  std::atomic<int> attempts{0};
  std::thread caller([&] {
    // Attempts time out while the answer is held; each retry comes on a fresh socket.
    RpcClient client(context, server.bound, {}, RpcClientConfig{200ms, 50});
    auto echo = client.Call<AgentPing, AgentEcho>(AgentPing{"kept"});
    answered_before_release = !released;
    attempts = client.attempts_made();
    ASSERT_TRUE(echo.ok()) << echo.status().ToString();
    EXPECT_EQ(echo->nonce, "kept");
  });
  // Held past a first attempt's limit, so that a retry is what gets the answer.
  ASSERT_TRUE(det::testing::WaitFor([&] { return server.held() > 0; }));
  std::this_thread::sleep_for(500ms);  // the client's real socket time: two attempts' limits
  EXPECT_EQ(server.held(), 1u) << "one run, one hold, however often it is asked";
  released = true;
  server.ReleaseAll(Status::Ok());
  caller.join();
  EXPECT_FALSE(answered_before_release);
  EXPECT_GE(attempts.load(), 2);
  EXPECT_EQ(server.executions.load(), 1);
}

TEST(RpcHoldTest, AFailedReleaseIsSentInsteadOfTheAnswer) {
  zmq::context_t context;
  HeldServer server(context);
  std::thread releaser([&] {
    ASSERT_TRUE(testing::WaitFor([&] { return server.held() > 0; }));
    server.ReleaseAll(Unavailable("not stored: the disk is full"));
  });
  RpcClient client(context, server.bound, {}, RpcClientConfig{5s, 1});
  auto echo = client.Call<AgentPing, AgentEcho>(AgentPing{"lost"});
  releaser.join();
  ASSERT_FALSE(echo.ok());
  EXPECT_EQ(echo.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(echo.status().message().find("the disk is full"), std::string::npos)
      << echo.status().ToString();
}

TEST(RpcHoldTest, AFailedHandlerIsAnsweredAtOnceAndHoldsNothing) {
  zmq::context_t context;
  HeldServer server(context);
  RpcClient client(context, server.bound, {}, RpcClientConfig{5s, 1});
  auto echo = client.Call<AgentPing, AgentEcho>(AgentPing{"bad"});
  ASSERT_FALSE(echo.ok());
  EXPECT_EQ(echo.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(server.held(), 0u);
}

}  // namespace
}  // namespace det::bus
