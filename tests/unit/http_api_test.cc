// The master's REST plumbing: base64 model definitions, bearer tokens, and the decoders of request
// bodies (which tests/fuzz/rest_json_fuzzer.cc fuzzes), and the server's streamed bodies.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <limits>
#include <mutex>

#include "master/front/actor_calls.h"
#include "master/front/http/cluster_routes.h"
#include "master/front/http/command_routes.h"
#include "master/front/http/core_routes.h"
#include "master/front/http/json.h"
#include "master/front/http/server.h"
#include "master/front/http/token_routes.h"
#include "master/front/http/user_routes.h"
#include "tests/testing/test_util.h"

namespace det::master::http {
namespace {

TEST(DecodeBase64Test, DecodesPaddedTextAndNamesTheFieldOtherwise) {
  EXPECT_EQ(*DecodeBase64("aGVsbG8=", "f"), "hello");
  EXPECT_EQ(*DecodeBase64("aGk=", "f"), "hi");
  EXPECT_EQ(*DecodeBase64("aGV5", "f"), "hey");
  EXPECT_EQ(*DecodeBase64("", "f"), "");
  for (const char* bad : {"aGk", "@@@@", "aG=k"}) {
    auto decoded = DecodeBase64(bad, "model_definition");
    ASSERT_FALSE(decoded.ok()) << bad;
    EXPECT_EQ(decoded.status().message(), "model_definition: expected base64 (RFC 4648, padded)");
  }
}

TEST(BearerTokenTest, TakesTheTokenOfABearerHeaderOnly) {
  Request req;
  EXPECT_EQ(BearerToken(req, "a token").status().message(),
            "Authorization: expected \"Bearer <a token>\"");
  req.headers = {{"Authorization", "Basic YWRtaW46cHc="}};
  EXPECT_EQ(BearerToken(req, "x").status().code(), StatusCode::kUnauthenticated);
  req.headers = {{"authorization", "Bearer "}};
  EXPECT_FALSE(BearerToken(req, "x").ok());
  req.headers = {{"AUTHORIZATION", "Bearer dets_abc"}};
  EXPECT_EQ(*BearerToken(req, "x"), "dets_abc");
}

// Determined's PostAccessToken and PatchAccessToken bodies, as its `det token` sends them.
TEST(RequestBodyTest, AccessTokenBodiesInDeterminedsShape) {
  auto created = TokenCreateRequestOf(R"({"userId": 3, "lifespan": "48h", "description": "ci"})");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->user_id, 3);
  EXPECT_EQ(created->lifespan_s, 48 * 3600);
  EXPECT_EQ(created->description, "ci");
  EXPECT_EQ(TokenCreateRequestOf(R"({"userId": 3, "lifespan": "-1"})")->lifespan_s, -1);
  EXPECT_EQ(TokenCreateRequestOf(R"({"userId": 3})")->lifespan_s, 0);  // the default
  EXPECT_EQ(TokenCreateRequestOf(R"({"lifespan": "1h"})").status().message(),
            "userId: is required (the id of the token's user)");
  EXPECT_EQ(TokenCreateRequestOf(R"({"userId": 3, "lifespan": "soon"})").status().message(),
            "lifespan: \"soon\" is not a lifespan; give e.g. 30d, 12h, 90m or never");
  auto revoke = TokenPatchRequestOf(7, R"({"tokenId": 7, "setRevoked": true})");
  ASSERT_TRUE(revoke.ok());
  EXPECT_TRUE(revoke->revoke);
  EXPECT_FALSE(revoke->description.has_value());
  auto describe = TokenPatchRequestOf(7, R"({"description": "new", "setRevoked": false})");
  EXPECT_EQ(describe->description.value_or(""), "new");
  EXPECT_FALSE(describe->revoke);
  EXPECT_EQ(TokenPatchRequestOf(7, R"({"setRevoked": "yes"})").status().message(),
            "setRevoked: expected true or false");
}

// Found by review and reproduced through rest_json_fuzzer (its regression-* seeds), which had not
// reached it: nlohmann's get<int>() of 1e300 is a float-to-integer overflow (UBSan), and of
// 3000000000 wraps.
TEST(RequestBodyTest, IntegersTheFieldCannotHoldAreErrorsNotOverflows) {
  for (const char* body :
       {R"({"config": {"entrypoint": "x", "resources": {"slots": 1e300}}})",
        R"({"config": {"entrypoint": "x", "resources": {"slots": 3000000000}}})",
        R"({"config": {"entrypoint": "x", "resources": {"slots": 1.5}}})",
        R"({"config": {"entrypoint": "x", "resources": {"priority": -1e19}}})"}) {
    auto run = CommandRunRequestOf(body);
    ASSERT_FALSE(run.ok()) << body;
    EXPECT_EQ(run.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(TokenCreateRequestOf(R"({"userId": 1e300})").ok());
  EXPECT_FALSE(TokenCreateRequestOf(R"({"userId": 9223372036854775808})").ok());
  EXPECT_EQ(TokenCreateRequestOf(R"({"userId": 2})")->user_id, 2);
  EXPECT_EQ(
      CommandRunRequestOf(R"({"config": {"entrypoint": "x", "resources": {"slots": 2}}})")->slots,
      2);
  EXPECT_EQ(MetricsReportOf(R"({"group": "training", "metrics": {
                                  "stepsCompleted": 9223372036854775807,
                                  "metrics": {"avgMetrics": {}}}})")
                ->steps,
            std::numeric_limits<int64_t>::max());
}

// Determined's `det cmd run` sends {"config": its command config}: read with its names, each wrong
// field named, host folders refused.
TEST(RequestBodyTest, DeterminedsCommandConfigIsRead) {
  auto run = CommandRunRequestOf(R"({"config": {"entrypoint": ["sleep", "5"],
      "description": "nap", "resources": {"slots": 2, "resource_pool": "gpu", "priority": 7,
      "shm_size": "1G"}, "environment": {"image": "python:3",
      "environment_variables": ["A=1"]}, "work_dir": "/tmp", "max_restarts": 3}})");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->entrypoint, (std::vector<std::string>{"sleep", "5"}));
  EXPECT_EQ(run->description, "nap");
  EXPECT_EQ(run->slots, 2);
  EXPECT_EQ(run->resource_pool, "gpu");
  EXPECT_EQ(run->priority, 7);
  EXPECT_EQ(run->container.shm_size_bytes, int64_t{1} << 30);
  EXPECT_EQ(run->container.image, "python:3");
  EXPECT_EQ(run->env.at("A"), "1");
  EXPECT_EQ(run->max_restarts, 3);
  EXPECT_EQ(CommandRunRequestOf(R"({"config": {"entrypoint": "echo hi"}})")->entrypoint,
            std::vector<std::string>{"echo hi"});
  const auto missing = CommandRunRequestOf(R"({"config": {"resources": {"slots": 1}}})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("config.entrypoint: is required"), std::string::npos)
      << missing.status().message();
  const auto mounts = CommandRunRequestOf(
      R"({"config": {"entrypoint": "ls", "bind_mounts": [{"host_path": "/", "container_path": "/h"}]}})");
  ASSERT_FALSE(mounts.ok());
  EXPECT_NE(mounts.status().message().find("bind_mounts"), std::string::npos);
  EXPECT_FALSE(CommandRunRequestOf(R"({"entrypoint": "ls"})").ok()) << "no config";
}

// Determined's library sends its metrics, checkpoints and early exits in these shapes (seen on
// the wire from determined 0.38.1's Core API); each wrong shape is an error naming the field.
TEST(RequestBodyTest, DeterminedsReportBodiesAreReadAndWrongShapesNamed) {
  auto metrics = MetricsReportOf(R"({"group": "validation", "metrics": {"metrics": {
      "avgMetrics": {"x": 10, "batches": 10}, "batchMetrics": null}, "trialId": 1,
      "trialRunId": 1, "reportTime": null, "stepsCompleted": 10}})");
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  EXPECT_EQ(metrics->kind, "validation");
  EXPECT_EQ(metrics->steps, 10);
  EXPECT_EQ(nlohmann::json::parse(metrics->metrics_json),
            (nlohmann::json{{"x", 10}, {"batches", 10}}));
  auto custom = MetricsReportOf(
      R"({"group": "inference_2", "metrics": {"stepsCompleted": 3, "metrics": {"avgMetrics": {}}}})");
  ASSERT_TRUE(custom.ok()) << custom.status().ToString();
  EXPECT_EQ(custom->kind, "inference_2");
  for (const char* group : {"exit", "checkpoint", "Bad-Name", ""}) {
    EXPECT_FALSE(
        MetricsReportOf(std::string(R"({"group": ")") + group +
                        R"(", "metrics": {"stepsCompleted": 3, "metrics": {"avgMetrics": {}}}})")
            .ok())
        << group;
  }
  auto flat =
      MetricsReportOf(R"({"group": "training", "steps_completed": 5, "metrics": {"x": 1}})");
  ASSERT_FALSE(flat.ok());
  EXPECT_NE(flat.status().message().find("metrics.stepsCompleted"), std::string::npos)
      << flat.status().message();

  auto checkpoint = CheckpointOf(R"({"metadata": {"steps_completed": 10},
      "resources": {"metadata.json": "27", "state": "7"}, "state": "STATE_COMPLETED",
      "training": {}, "uuid": "d710ea47-5aef-4c13-a2b1-b7551bab0cb9", "allocationId": "1.1.1",
      "reportTime": "2026-11-26T00:50:49.032080+00:00", "storageId": null, "taskId": "1.1"})");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->steps_completed, 10);
  EXPECT_EQ(checkpoint->uuid, "d710ea47-5aef-4c13-a2b1-b7551bab0cb9");
  EXPECT_EQ(nlohmann::json::parse(checkpoint->resources_json),
            (nlohmann::json{{"metadata.json", 27}, {"state", 7}}));
  auto no_steps = CheckpointOf(R"({"uuid": "u", "metadata": {}})");
  ASSERT_FALSE(no_steps.ok());
  EXPECT_NE(no_steps.status().message().find("steps_completed"), std::string::npos);

  EXPECT_EQ(EarlyExitReportOf(R"({"reason": "EXITED_REASON_INVALID_HP"})")->reason, "INVALID_HP");
  EXPECT_EQ(EarlyExitReportOf(R"({"reason": "EXITED_REASON_USER_REQUESTED_STOP"})")->reason,
            "USER_CANCELED");
  EXPECT_FALSE(EarlyExitReportOf(R"({"reason": "INVALID_HP"})").ok());
}

// The library's profiler reports groups of system metrics without a step: stored by report time.
TEST(RequestBodyTest, AProfilerReportWithoutStepsIsStoredByItsReportTime) {
  auto report = MetricsReportOf(R"({"group": "cpu", "metrics": {"trialId": 1, "trialRunId": 1,
      "reportTime": "2026-11-26T04:43:05.630903+00:00",
      "metrics": {"avgMetrics": {"agent-0": {"cpu_util_simple": 12.5}}}}})");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->kind, "cpu");
  EXPECT_EQ(report->steps, *ParseRfc3339Utc("2026-11-26T04:43:05.630903Z") / 1000000);
  auto training = MetricsReportOf(
      R"({"group": "training", "metrics": {"metrics": {"avgMetrics": {"loss": 1}}}})");
  ASSERT_FALSE(training.ok());
  EXPECT_NE(training.status().message().find("stepsCompleted: is required"), std::string::npos);
}

// What core_context.checkpoint.delete sends: the resources left, as decimal text; none left is {}.
TEST(RequestBodyTest, CheckpointPatchesAreReadAsTheLibrarySendsThem) {
  auto patches = CheckpointPatchesOf(R"({"checkpoints": [
      {"uuid": "a", "resources": {"resources": {}}},
      {"uuid": "b", "resources": {"resources": {"weights": "12", "opt/state": 3}}},
      {"uuid": "c", "resources": {"resources": null}}]})");
  ASSERT_TRUE(patches.ok()) << patches.status().ToString();
  ASSERT_EQ(patches->size(), 3u);
  EXPECT_EQ((*patches)[0].resources_json, "{}");
  EXPECT_EQ(nlohmann::json::parse((*patches)[1].resources_json),
            (nlohmann::json{{"weights", 12}, {"opt/state", 3}}));
  EXPECT_EQ((*patches)[2].resources_json, "{}");
  for (const char* bad :
       {R"({})", R"({"checkpoints": [1]})", R"({"checkpoints": [{"resources": {}}]})",
        R"({"checkpoints": [{"uuid": "a", "resources": {"resources": {"w": "12 bytes"}}}]})"}) {
    EXPECT_FALSE(CheckpointPatchesOf(bad).ok()) << bad;
  }
}

// Found by review: "port" or "slots" that were not numbers threw type_error out of the rendezvous
// route (and 1e300 overflowed).
TEST(RequestBodyTest, ARendezvousPortOrSlotsThatIsNotAnIntIsAnError) {
  const std::string start = R"({"rank": 1, "num_containers": 2, "address": "10.0.0.3", )";
  for (const char* tail : {R"("port": "29400"})", R"("slots": 1e300})", R"("port": null})"}) {
    auto request = RendezvousRequestOf(start + tail);
    ASSERT_FALSE(request.ok()) << tail;
    EXPECT_EQ(request.status().code(), StatusCode::kInvalidArgument);
  }
  auto request = RendezvousRequestOf(start + R"("port": 29400, "slots": 4})");
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(request->arrival.port, 29400);
  EXPECT_EQ(request->arrival.slots, 4);
  EXPECT_EQ(request->num_containers, 2);
}

// Found by review: dump() and the YAML reader recurse once per level, and a body of a thousand
// brackets overflowed the stack of the thread that read it (a crashed master).
TEST(RequestBodyTest, ABodyNestedDeeperThanTheLimitIsRefused) {
  const std::string deep =
      std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  auto refused = ParseJsonObject(R"({"entrypoint": "x", "e": )" + deep + "}");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("nested more than 64 levels"), std::string::npos);
  const std::string thousand = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_FALSE(
      CommandRunRequestOf(R"({"config": {"entrypoint": "x", "env": )" + thousand + "}}").ok());
  const std::string allowed =
      std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']');
  EXPECT_TRUE(ParseJsonObject(R"({"e": )" + allowed + "}").ok());
}

// Found by review: a command's body is read again as YAML for its environment, and yaml-cpp throws
// on keys longer than 1024 characters: the exception escaped the route.
TEST(RequestBodyTest, ACommandWithAKeyLongerThan1024CharactersIsAnErrorNotAnException) {
  auto run = CommandRunRequestOf(R"({"config": {"entrypoint": "x", "env": {")" +
                                 std::string(1100, 'K') + R"(": "v"}}})");
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(run.status().message().find("config"), std::string::npos);
}

// What a person may not ask of a command, whichever gateway it comes through: host folders
// mounted into its container (only the master mounts checkpoint storage) and det's own
// variables (a forged DET_SESSION_TOKEN would speak for another workload).
TEST(CommandCheckTest, HostMountsAndDetsOwnVariablesAreRefused) {
  bus::CommandRunRequest plain;
  plain.entrypoint = {"true"};
  plain.env = {{"LEARNING_RATE", "0.1"}};
  EXPECT_TRUE(master::ActorCalls::CheckCommand(plain).ok());
  bus::CommandRunRequest mounting = plain;
  mounting.container.image = "ubuntu";
  mounting.container.binds = {"/:/host"};
  Status refused = master::ActorCalls::CheckCommand(mounting);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("container.binds"), std::string::npos) << refused.message();
  for (const char* name : {"DET_SESSION_TOKEN", "DET_ALLOCATION_ID", "CUDA_VISIBLE_DEVICES",
                           "NVIDIA_VISIBLE_DEVICES", "NOT A NAME", "1X"}) {
    bus::CommandRunRequest forged = plain;
    forged.env[name] = "x";
    Status why = master::ActorCalls::CheckCommand(forged);
    EXPECT_EQ(why.code(), StatusCode::kInvalidArgument) << name;
    EXPECT_NE(why.message().find("env: "), std::string::npos) << why.message();
  }
}

// Determined's PostCheckpointMetadata body, as its SDK's add_metadata sends it.
TEST(RequestBodyTest, CheckpointMetadataIsAnObjectReplacedWhole) {
  EXPECT_EQ(*CheckpointMetadataOf(R"({"checkpoint": {"uuid": "u", "metadata": {"a": 1}}})"),
            R"({"a":1})");
  EXPECT_EQ(CheckpointMetadataOf(R"({"checkpoint": {"metadata": [1]}})").status().message(),
            "checkpoint.metadata: is required (a JSON object)");
  EXPECT_EQ(CheckpointMetadataOf(R"({"metadata": {}})").status().message(),
            "checkpoint: is required (an object with metadata)");
  const std::string huge = R"({"checkpoint": {"metadata": {"a": ")" +
                           std::string(kCheckpointMetadataLimit, 'x') + R"("}}})";
  EXPECT_EQ(CheckpointMetadataOf(huge).status().code(), StatusCode::kInvalidArgument);
}

// Determined's pagination: a negative offset counts from the end; the page echoes what was asked.
TEST(PaginationTest, NegativeOffsetsCountFromTheEnd) {
  const Page last_two = PageOf(-2, 0, 10);
  EXPECT_EQ(last_two.start, 8u);
  EXPECT_EQ(last_two.end, 10u);
  EXPECT_EQ(last_two.offset, -2);
  EXPECT_EQ(PageOf(-20, 5, 10).start, 0u);
  EXPECT_EQ(PageOf(-20, 5, 10).end, 5u);
  EXPECT_EQ(PageOf(12, 5, 10).start, 10u);
  EXPECT_EQ(PageOf(3, 5, 10).end, 8u);
  Request req;
  req.params = {{"offset", "-3"}};
  EXPECT_EQ(*QueryOffset(req), -3);
  req.params = {{"offset", "-"}};
  EXPECT_EQ(QueryOffset(req).status().message(),
            "offset: expected a whole number (negative: from the end), got \"-\"");
}

// A streamed body whose source breaks off (a checkpoint download whose storage failed midway)
// ends the connection without the chunked body's end: the client sees a broken transfer, never a
// shorter body; one that ends normally arrives whole.
class TwoPieces : public BodySource {
 public:
  explicit TwoPieces(bool breaks) : breaks_(breaks) {}
  Piece Next() override {
    if (sent_++ == 0) return {"first;", false};
    return breaks_ ? Piece{"", false, true} : Piece{"second", true};
  }

 private:
  bool breaks_;
  int sent_ = 0;
};

// `router` served on a free loopback port, and a client of it.
struct Served {
  explicit Served(Router& router) : server(router, {}) {
    auto bound = server.Bind("127.0.0.1", 0);
    EXPECT_TRUE(bound.ok());
    port = bound.ok() ? *bound : 0;
    server.Start();
    http = std::make_unique<httplib::Client>("127.0.0.1", port);
  }
  HttpServer server;
  int port = 0;
  std::unique_ptr<httplib::Client> http;
};

TEST(HttpStreamTest, ABrokenPieceEndsTheConnectionWithoutTheBodysEnd) {
  Router router;
  for (const bool breaks : {false, true}) {
    router.Get(breaks ? "/broken" : "/whole", [breaks](const Request&, Response& res) {
      res.Stream("application/octet-stream", std::make_shared<TwoPieces>(breaks));
    });
  }
  Served served(router);
  auto whole = served.http->Get("/whole");
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->body, "first;second");
  auto broken = served.http->Get("/broken");
  EXPECT_FALSE(broken) << "a broken stream was taken as complete: " << broken->body;
}

// A streamed body of many pieces arrives whole and in order; Next() is never called while another
// call is under way (the next piece is read while one is written), and each piece written is
// given back to the source to be written into again.
class CountedPieces : public BodySource {
 public:
  static constexpr int kPieces = 50;
  Piece Next() override {
    if (in_next_.exchange(true)) overlapped_ = true;
    const int index = next_++;
    Piece piece{"piece-" + std::to_string(index) + ";", index + 1 == kPieces};
    in_next_ = false;
    return piece;
  }
  void Recycle(std::string written) override {
    std::lock_guard lock(mutex_);
    recycled_ += written;
  }
  bool overlapped() const { return overlapped_; }
  std::string recycled() {
    std::lock_guard lock(mutex_);
    return recycled_;
  }

 private:
  std::atomic<bool> in_next_{false};
  std::atomic<bool> overlapped_{false};
  int next_ = 0;
  std::mutex mutex_;
  std::string recycled_;
};

TEST(HttpStreamTest, PiecesAreReadOneAtATimeWhileWrittenAndGivenBackOnceWritten) {
  Router router;
  auto source = std::make_shared<CountedPieces>();
  router.Get("/pieces", [source](const Request&, Response& res) {
    res.Stream("application/octet-stream", source);
  });
  Served served(router);
  auto got = served.http->Get("/pieces");
  ASSERT_TRUE(got);
  std::string expected;
  for (int i = 0; i < CountedPieces::kPieces; ++i) expected += "piece-" + std::to_string(i) + ";";
  EXPECT_EQ(got->body, expected);
  EXPECT_FALSE(source->overlapped()) << "Next() was called while another call was under way";
  // Every piece but the last (after which the source is let go) came back once written.
  EXPECT_EQ(
      source->recycled(),
      expected.substr(0, expected.size() -
                             ("piece-" + std::to_string(CountedPieces::kPieces - 1) + ";").size()));
}

using namespace std::chrono_literals;

// A source whose first piece is larger than the sockets' buffers and whose second Next() waits
// until the test releases it; what it saw is kept in SlowState, which outlives it.
struct SlowState {
  std::mutex mutex;
  std::condition_variable changed;
  bool release = false;
  bool in_next = false;
  bool destroyed = false;
  bool destroyed_in_next = false;  // a use after free, had the source's memory been reused
  int calls = 0;
  bool Is(const bool& flag) {
    std::lock_guard lock(mutex);
    return flag;
  }
};

class SlowSecondPiece : public BodySource {
 public:
  explicit SlowSecondPiece(std::shared_ptr<SlowState> state) : state_(std::move(state)) {}
  ~SlowSecondPiece() override {
    std::lock_guard lock(state_->mutex);
    state_->destroyed = true;
    state_->destroyed_in_next = state_->in_next;
  }
  Piece Next() override {
    std::shared_ptr<SlowState> state = state_;  // kept on this stack, whatever happens to *this
    std::unique_lock lock(state->mutex);
    if (++state->calls == 1) return {std::string(32 << 20, 'x'), false};
    state->in_next = true;
    state->changed.wait(lock, [&] { return state->release; });
    state->in_next = false;
    return {"more", false};
  }

 private:
  std::shared_ptr<SlowState> state_;
};

TEST(HttpStreamTest, AClientGoneWhileAPieceIsReadLeavesTheSourceUntilTheReadEnds) {
  auto state = std::make_shared<SlowState>();
  Router router;
  router.Get("/slow", [state](const Request&, Response& res) {
    res.Stream("application/octet-stream", std::make_shared<SlowSecondPiece>(state));
  });
  Served served(router);
  // A client that asks, reads a little, and goes with bytes unread (the connection is reset).
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(served.port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const std::string ask = "GET /slow HTTP/1.1\r\nHost: test\r\n\r\n";
  ASSERT_EQ(::send(fd, ask.data(), ask.size(), 0), static_cast<ssize_t>(ask.size()));
  char some[4096];
  ASSERT_GT(::recv(fd, some, sizeof(some), 0), 0);
  // The second piece is asked for while the first is written.
  ASSERT_TRUE(testing::Eventually([&] { return state->Is(state->in_next); }, 10s));
  ::close(fd);
  // The server's write fails and it closes the connection; the source stays while Next() runs.
  EXPECT_FALSE(testing::Eventually([&] { return state->Is(state->destroyed); }, 1s))
      << "the source went while its Next() was under way";
  {
    std::lock_guard lock(state->mutex);
    state->release = true;
  }
  state->changed.notify_all();
  EXPECT_TRUE(testing::Eventually([&] { return state->Is(state->destroyed); }, 10s));
  EXPECT_FALSE(state->Is(state->destroyed_in_next));
  std::lock_guard lock(state->mutex);
  EXPECT_EQ(state->calls, 2) << "no piece is read for a connection that is gone";
}

}  // namespace
}  // namespace det::master::http
