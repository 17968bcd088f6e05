// The agent's Docker Engine client against the fake engine (tests/fakes/fake_docker.h) in this
// process, and against an engine that answers nonsense.
#include "agent/docker/docker_client.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "tests/fakes/fake_docker.h"
#include "tests/testing/test_util.h"

namespace det::agent {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A unix socket path short enough for sockaddr_un, unique to the test.
std::string SocketPath(const std::string& name) {
  return "/tmp/det-dc-" + std::to_string(getpid()) + "-" + name + ".sock";
}

class DockerClientTest : public ::testing::Test {
 protected:
  void Serve(testing::FakeDockerOptions options) {
    options.pull_delay = std::chrono::milliseconds(1);
    client_.reset();  // its idle connection would hold the fake's stop up
    fake_.reset();    // the next one serves on the same socket
    fake_ = std::make_unique<testing::FakeDocker>(std::move(options));
    fake_->Start(SocketPath("fake"));
    client_ = std::make_unique<DockerClient>(fake_->socket_path());
  }
  void SetUp() override {
    Serve({{"det/sh:1"}, {"det/pullable:2"}, {{"det/private:3", "u:p"}}, {"det/interrupted:4"}});
  }

  // Runs `script` in a new container of det/sh:1 labelled `label`=yes; its id.
  std::string Run(const std::string& name, const std::string& script,
                  const std::string& label = "det.test") {
    const json body = {{"Image", "det/sh:1"},
                       {"Cmd", {"/bin/sh", "-c", script}},
                       {"Env", {"GREETING=hello"}},
                       {"WorkingDir", fs::temp_directory_path().string()},
                       {"Labels", {{label, "yes"}}}};
    Result<std::string> id = client_->Create(name, body);
    EXPECT_TRUE(id.ok()) << id.status().message();
    if (!id.ok()) return "";
    EXPECT_TRUE(client_->Start(*id).ok());
    return *id;
  }
  // The container's whole output, followed to its end: {stdout, stderr}, timestamps removed.
  std::pair<std::string, std::string> Output(const std::string& id, const std::string& since = "") {
    std::string out, err;
    Status followed = client_->Logs(id, since, [&](int stream, std::string_view frame) {
      const std::string_view text = frame.substr(frame.find(' ') + 1);
      (stream == 1 ? out : err).append(text);
      return true;
    });
    EXPECT_TRUE(followed.ok()) << followed.message();
    return {out, err};
  }

  void TearDown() override { client_.reset(); }

  std::unique_ptr<testing::FakeDocker> fake_;
  std::unique_ptr<DockerClient> client_;
};

TEST_F(DockerClientTest, TheNewestVersionBothSpeakIsAgreed) {
  Result<std::string> version = client_->Ping();
  ASSERT_TRUE(version.ok()) << version.status().message();
  EXPECT_EQ(*version, "1.47");
  Serve({.images = {"det/sh:1"}, .api_version = "1.44"});
  EXPECT_EQ(client_->ImageExists("det/sh:1").value_or(false), true);
  EXPECT_EQ(fake_->Calls().back().value("version", ""), "1.44") << fake_->Calls();
  Serve({.api_version = "1.52", .min_api_version = "1.48"});  // newer than this client
  Result<std::string> refused = client_->Ping();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("1.48 to 1.52"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("1.41 to 1.47"), std::string::npos);
}

TEST_F(DockerClientTest, NoEngineOnTheSocketIsUnavailableNamingIt) {
  DockerClient nobody("/tmp/det-dc-nobody.sock");
  Result<bool> answer = nobody.ImageExists("x");
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(answer.status().message().find("/tmp/det-dc-nobody.sock"), std::string::npos);
}

TEST(DockerStreamDecoderTest, FramesAreWholeHoweverTheBytesArrive) {
  const std::string frames = std::string("\x01\0\0\0\0\0\0\x06hello\n", 14) +
                             std::string("\x02\0\0\0\0\0\0\x04oops", 12) +
                             std::string("\x01\0\0\0\0\0\0\0", 8);
  std::vector<std::pair<int, std::string>> seen;
  DockerStreamDecoder decoder(
      [&](int stream, std::string_view data) { seen.emplace_back(stream, std::string(data)); });
  for (char byte : frames) decoder.Feed(std::string_view(&byte, 1));
  const std::vector<std::pair<int, std::string>> expected = {{1, "hello\n"}, {2, "oops"}, {1, ""}};
  EXPECT_EQ(seen, expected);
  seen.clear();
  DockerStreamDecoder whole(
      [&](int stream, std::string_view data) { seen.emplace_back(stream, std::string(data)); });
  whole.Feed(frames);
  EXPECT_EQ(seen, expected);
}

TEST(ImageReferenceTest, TagsDigestsAndRegistryPortsAreTold) {
  using Split = std::pair<std::string, std::string>;
  EXPECT_EQ(SplitImageReference("busybox"), (Split{"busybox", "latest"}));
  EXPECT_EQ(SplitImageReference("reg:5000/a/b:1.2"), (Split{"reg:5000/a/b", "1.2"}));
  EXPECT_EQ(SplitImageReference("reg:5000/a/b"), (Split{"reg:5000/a/b", "latest"}));
  EXPECT_EQ(SplitImageReference("a/b@sha256:abc"), (Split{"a/b@sha256:abc", ""}));
}

TEST_F(DockerClientTest, PullReportsProgressAndTheImageIsThenPresent) {
  EXPECT_EQ(client_->ImageExists("det/pullable:2").value_or(true), false);
  int64_t last = 0, total = 0;
  int reports = 0;
  Status pulled = client_->Pull("det/pullable:2", "", [&](const PullProgress& p) {
    EXPECT_GE(p.current, last) << "progress only grows";
    last = p.current;
    total = p.total;
    ++reports;
    return true;
  });
  ASSERT_TRUE(pulled.ok()) << pulled.message();
  EXPECT_GT(reports, 5);
  EXPECT_GT(total, 0);
  EXPECT_EQ(last, total);
  EXPECT_EQ(client_->ImageExists("det/pullable:2").value_or(false), true);
  const json call = fake_->Calls()[fake_->Calls().size() - 2];
  EXPECT_EQ(call["query"].value("fromImage", ""), "det/pullable");
  EXPECT_EQ(call["query"].value("tag", ""), "2");
}

// The engine refuses what the registry refuses before any progress (an HTTP error), and reports
// a failure while layers download as the stream's last line: both fail the pull with its message.
TEST_F(DockerClientTest, PullErrorsFailThePullWithTheEnginesMessage) {
  Status unknown = client_->Pull("det/absent:1", "", {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.message().find("pull access denied for det/absent"), std::string::npos)
      << unknown.message();
  Status anonymous = client_->Pull("det/private:3", "", {});
  ASSERT_FALSE(anonymous.ok());
  EXPECT_NE(anonymous.message().find("no basic auth credentials"), std::string::npos)
      << anonymous.message();
  Status wrong = client_->Pull("det/private:3", R"({"username":"u","password":"x"})", {});
  EXPECT_NE(wrong.message().find("unauthorized: authentication required"), std::string::npos)
      << wrong.message();
  int reports = 0;
  Status interrupted = client_->Pull("det/interrupted:4", "", [&](const PullProgress&) {
    ++reports;
    return true;
  });
  ASSERT_FALSE(interrupted.ok());
  EXPECT_NE(interrupted.message().find("unexpected EOF"), std::string::npos)
      << interrupted.message();
  EXPECT_GT(reports, 0) << "its progress came first";
  const std::string auth = R"({"username":"u","password":"p","serveraddress":"reg"})";
  Status with_auth = client_->Pull("det/private:3", auth, {});
  EXPECT_TRUE(with_auth.ok()) << with_auth.message();
  EXPECT_EQ(fake_->Calls().back()["registry_auth"], json::parse(auth));
  Status abandoned = client_->Pull("det/pullable:2", "", [](const PullProgress&) { return false; });
  EXPECT_FALSE(abandoned.ok()) << "the reader may give up";
}

TEST_F(DockerClientTest, AContainerRunsWithItsEnvironmentAndItsOutputAndExitCodeAreRead) {
  const std::string id =
      Run("det-run", "echo \"$GREETING from $(pwd)\"; echo oops >&2; sleep 0.1; exit 3");
  ASSERT_FALSE(id.empty());
  const auto [out, err] = Output(id);
  EXPECT_EQ(out, "hello from " + fs::temp_directory_path().string() + "\n");
  EXPECT_EQ(err, "oops\n");
  EXPECT_EQ(client_->Wait(id).value_or(-1), 3);
  Result<ContainerState> state = client_->Inspect("det-run");  // by name too
  ASSERT_TRUE(state.ok()) << state.status().message();
  EXPECT_EQ(state->id, id);
  EXPECT_EQ(state->status, "exited");
  EXPECT_EQ(state->exit_code, 3);
  EXPECT_FALSE(state->oom_killed);
  EXPECT_EQ(state->labels.at("det.test"), "yes");
  int creates = 0;
  for (const json& call : fake_->Calls()) {
    if (call.value("path", "") == "/containers/create") {
      ++creates;
      EXPECT_EQ(call.value("content_type", ""), "application/json");
      EXPECT_EQ(call["query"].value("name", ""), "det-run");
    }
  }
  EXPECT_EQ(creates, 1);
}

TEST_F(DockerClientTest, AStartThatFailsIsAnErrorAndInspectTellsWhyAsTheEngineDoes) {
  Result<std::string> id = client_->Create(
      "det-nowhere",
      {{"Image", "det/sh:1"}, {"Cmd", {"true"}}, {"WorkingDir", "/nonexistent/det-fake"}});
  ASSERT_TRUE(id.ok()) << id.status().message();
  Status started = client_->Start(*id);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(started.message().find("/nonexistent/det-fake"), std::string::npos)
      << started.message();
  Result<ContainerState> state = client_->Inspect(*id);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->status, "created") << "it never ran";
  EXPECT_FALSE(state->running);
  EXPECT_EQ(state->exit_code, 127);
  EXPECT_NE(state->error.find("/nonexistent/det-fake"), std::string::npos);
  EXPECT_EQ(client_->Wait(*id).value_or(-1), 127) << "not running: at once";
}

TEST_F(DockerClientTest, LogsSinceATimeSkipEarlierLines) {
  const std::string id = Run("det-since", "echo first; sleep 0.3; echo second");
  ASSERT_FALSE(id.empty());
  std::vector<std::string> stamps;
  ASSERT_TRUE(client_
                  ->Logs(id, "",
                         [&](int, std::string_view frame) {
                           stamps.emplace_back(frame.substr(0, frame.find(' ')));
                           return true;
                         })
                  .ok());
  ASSERT_EQ(stamps.size(), 2u);
  // One nanosecond after the first line: only the second.
  const std::string first = stamps[0];
  std::tm tm{};
  strptime(first.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  const long long nanos = std::stoll(first.substr(20, 9)) + 1;
  char since[64];
  std::snprintf(since, sizeof since, "%lld.%09lld", static_cast<long long>(timegm(&tm)), nanos);
  EXPECT_EQ(Output(id, since).first, "second\n");
}

TEST_F(DockerClientTest, AKillTheApiDidNotSendReadsAsOutOfMemory) {
  const std::string id = Run("det-oom", "echo allocating; kill -9 $$");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(client_->Wait(id).value_or(-1), 137);
  Result<ContainerState> state = client_->Inspect(id);
  ASSERT_TRUE(state.ok());
  EXPECT_TRUE(state->oom_killed);
  EXPECT_EQ(state->exit_code, 137);
}

TEST_F(DockerClientTest, StopKillRemoveAndListByLabel) {
  const std::string id = Run("det-stop", "exec sleep 60", "det.stop-test");
  const std::string other = Run("det-other", "true", "det.other");
  ASSERT_FALSE(id.empty());
  Result<std::vector<ContainerState>> listed = client_->List("det.stop-test", "yes");
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, id);
  EXPECT_EQ((*listed)[0].labels.at("det.stop-test"), "yes");
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(client_->Stop(id, 1).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(client_->Inspect(id)->exit_code, 143) << "SIGTERM ended it";
  EXPECT_TRUE(client_->Kill(id, "SIGKILL").ok()) << "a stopped container: nothing to do";
  EXPECT_TRUE(client_->Stop(id, 1).ok()) << "already stopped";
  ASSERT_TRUE(client_->Remove(id).ok());
  EXPECT_EQ(client_->Inspect(id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(client_->Remove(id).ok()) << "removing what is gone is done";
  EXPECT_EQ(
      client_->Create("det-other", {{"Image", "det/sh:1"}, {"Cmd", {"true"}}}).status().code(),
      StatusCode::kAlreadyExists);
  EXPECT_EQ(client_->Create("det-x", {{"Image", "det/none:1"}, {"Cmd", {"true"}}}).status().code(),
            StatusCode::kNotFound);
  (void)other;
}

// One HTTP/1.1 exchange on `socket`, written as given (`request` has "Connection: close"), its
// answer read to the end. With `body_after_continue`, the request's headers go first, then the
// body once the server said "100 Continue", as a client that sends "Expect: 100-continue" does.
std::string RawExchange(const std::string& socket, const std::string& request,
                        const std::string& body_after_continue = "") {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return "connect failed";
  }
  auto send_all = [fd](const std::string& bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  };
  std::string answer;
  char buf[4096];
  send_all(request);
  if (!body_after_continue.empty()) {
    while (answer.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      answer.append(buf, static_cast<size_t>(n));
    }
    send_all(body_after_continue);
  }
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, n);
  ::close(fd);
  return answer;
}

// The fake engine itself, where no client of ours reaches: HTTP as other clients speak it.
TEST_F(DockerClientTest, FakeEngineReadsChunkedBodiesAfter100Continue) {
  const std::string body =
      json{{"Image", "det/sh:1"}, {"Cmd", {"true"}}, {"Env", {"PAD=" + std::string(3000, 'x')}}}
          .dump();
  std::ostringstream chunked;
  for (size_t at = 0; at < body.size(); at += 1000) {
    const std::string piece = body.substr(at, 1000);
    chunked << std::hex << piece.size() << "\r\n" << piece << "\r\n";
  }
  chunked << "0\r\n\r\n";
  const std::string answer =
      RawExchange(fake_->socket_path(),
                  "POST /v1.45/containers/create?name=det-chunked HTTP/1.1\r\nHost: docker\r\n"
                  "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                  "Expect: 100-continue\r\nConnection: close\r\n\r\n",
                  chunked.str());
  EXPECT_EQ(answer.rfind("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("\"Id\":"), std::string::npos) << answer;
  const json call = fake_->Calls().back();
  EXPECT_EQ(call.value("version", ""), "1.45");
  EXPECT_EQ(call["body"], json::parse(body));
  const std::string plain =
      RawExchange(fake_->socket_path(),
                  "POST /containers/create?name=det-plain HTTP/1.1\r\nHost: docker\r\n"
                  "Content-Type: text/plain\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  EXPECT_EQ(plain.rfind("HTTP/1.1 400 ", 0), 0u) << "create takes JSON only: " << plain;
}

// Binds of existing folders only; at another path only as root (the fake mounts it in a mount
// namespace of the process's own), as the engine would need no root but the fake does.
TEST_F(DockerClientTest, FakeEngineMountsOnlyExistingFoldersAndElsewhereOnlyAsRoot) {
  const std::string here = fs::temp_directory_path().string();
  auto create = [&](const std::string& name, const std::string& bind) {
    return client_
        ->Create(name, {{"Image", "det/sh:1"},
                        {"Cmd", {"true"}},
                        {"HostConfig", {{"Binds", {bind}}, {"ShmSize", 1 << 20}}}})
        .status();
  };
  EXPECT_TRUE(create("det-bind", here + ":" + here + ":ro").ok());
  EXPECT_EQ(fake_->Containers()[0]["HostConfig"]["Binds"][0], here + ":" + here + ":ro");
  const Status remapped = create("det-remap", here + ":/data");
  if (geteuid() == 0) {
    EXPECT_TRUE(remapped.ok()) << remapped.message();
  } else {
    EXPECT_EQ(remapped.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(remapped.message().find("need root"), std::string::npos) << remapped.message();
  }
  const std::string missing = "/nonexistent/det-fake-bind";
  EXPECT_EQ(create("det-missing", missing + ":" + missing).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_EQ(create("det-relative", "data:/data").code(), StatusCode::kInvalidArgument);
}

TEST_F(DockerClientTest, FakeEngineAnswersHeadPingAndUnknownPathsAsTheEngine) {
  const std::string ping = RawExchange(
      fake_->socket_path(), "HEAD /_ping HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(ping.rfind("HTTP/1.1 200 ", 0), 0u) << ping;
  EXPECT_NE(ping.find("Api-Version: 1.47\r\n"), std::string::npos) << ping;
  EXPECT_EQ(ping.substr(ping.find("\r\n\r\n") + 4), "") << "HEAD: no body";
  EXPECT_EQ(fake_->Calls().back().value("method", ""), "HEAD");
  const std::string unknown =
      RawExchange(fake_->socket_path(),
                  "GET /v1.47/nothing/here HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(unknown.rfind("HTTP/1.1 404 ", 0), 0u) << unknown;
  EXPECT_NE(unknown.find(R"({"message":"page not found"})"), std::string::npos) << unknown;
  const std::string too_new =
      RawExchange(fake_->socket_path(),
                  "GET /v1.99/version HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n");
  EXPECT_NE(too_new.find("client version 1.99 is too new. Maximum supported API version is 1.47"),
            std::string::npos)
      << too_new;
}

// An engine (or something else on its socket) that answers nonsense: errors, no crash.
TEST(DockerClientHostileEngineTest, NonsenseAnswersAreErrorsNamingTheCall) {
  const std::string socket = SocketPath("hostile");
  httplib::Server server;
  server.set_address_family(AF_UNIX);
  auto answer = [](const char* body) {
    return [body](const httplib::Request&, httplib::Response& res) {
      res.set_content(body, "application/json");
    };
  };
  server.Get("/version", answer(R"({"ApiVersion":"1.45","MinAPIVersion":7})"));
  server.Get(R"(/v1\.45/containers/json)",
             answer(R"([{"Id":"a","State":"running","Labels":{"k":3,"det.x":"y"}}, 5])"));
  server.Get(R"(/v1\.45/containers/bad/json)", answer(R"({"State":{"ExitCode":"zero"}})"));
  server.Get(R"(/v1\.45/containers/list/json)", answer(R"([1,2])"));
  server.Post(R"(/v1\.45/containers/create)", answer(R"({"Warnings":null})"));
  server.Post(R"(/v1\.45/containers/w/wait)", answer(R"({"StatusCode":"x"})"));
  server.Post(R"(/v1\.45/images/create)", answer("{\"status\":1}\n{\"progressDetail\":[]}\nxx\n"));
  ::unlink(socket.c_str());
  server.bind_to_port(socket.c_str(), 80);
  std::thread serving([&] { server.listen_after_bind(); });
  ASSERT_TRUE(testing::WaitFor([&] { return server.is_running(); }));

  auto owned = std::make_unique<DockerClient>(socket);
  DockerClient& client = *owned;
  Result<std::vector<ContainerState>> listed = client.List("det.x", "y");
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->at(0).labels, (std::map<std::string, std::string>{{"det.x", "y"}}));
  EXPECT_EQ(client.Inspect("bad").status().code(), StatusCode::kUnavailable);
  EXPECT_NE(client.Inspect("bad").status().message().find("container bad"), std::string::npos);
  EXPECT_EQ(client.Inspect("list").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(client.Create("c", json::object()).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(client.Wait("w").status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(client.Pull("p:1", "", [](const PullProgress&) { return true; }).ok())
      << "lines of other shapes are skipped";
  owned.reset();  // its idle connection would hold the server's stop up
  server.stop();
  serving.join();
  ::unlink(socket.c_str());
}

}  // namespace
}  // namespace det::agent
