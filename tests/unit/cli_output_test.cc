#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bus/rpc_client.h"
#include "cli/completion.h"
#include "cli/config_files.h"
#include "cli/master_trust.h"
#include "cli/master_url.h"
#include "cli/output.h"
#include "cli/relay_frames.h"

namespace det::cli {
namespace {

using nlohmann::ordered_json;

TEST(CsvTest, AnArrayOfObjectsIsAHeaderAndARowEach) {
  const ordered_json rows = ordered_json::parse(
      R"([{"id":1,"name":"a, b","tags":["x"]},{"id":2,"note":"say \"hi\"\nbye","name":null}])");
  EXPECT_EQ(ToCsv(rows),
            "id,name,tags,note\n"
            "1,\"a, b\",\"[\"\"x\"\"]\",\n"
            "2,,,\"say \"\"hi\"\"\nbye\"\n");
}

TEST(CsvTest, OneObjectIsOneRowAndScalarsAreThemselves) {
  EXPECT_EQ(ToCsv(ordered_json{{"task_id", "cmd-1"}}), "task_id\ncmd-1\n");
  EXPECT_EQ(ToCsv(ordered_json{{"task_id", "cmd-1"}}, /*header=*/false), "cmd-1\n");
  EXPECT_EQ(ToCsv(ordered_json::array({1, "two"})), "1\ntwo\n");
  EXPECT_EQ(ToCsv(ordered_json::array()), "");
}

TEST(CompletionTest, EveryCommandPathCompletesItsSubcommandsAndOptions) {
  CLI::App app;
  app.add_flag("--json");
  auto* agent = app.add_subcommand("agent");
  agent->add_subcommand("list");
  agent->add_subcommand("disable")->add_flag("--drain");
  const std::string script = BashCompletion(app);
  EXPECT_NE(script.find(R"("") words="agent --help -h --json ")"), std::string::npos) << script;
  EXPECT_NE(script.find(R"(" agent") words="list disable --help -h ")"), std::string::npos);
  EXPECT_NE(script.find(R"(" agent disable") words="--help -h --drain ")"), std::string::npos);
  EXPECT_NE(script.find(R"(" agent"|" agent disable"|" agent list") path=)"), std::string::npos);
  EXPECT_NE(script.find("complete -F _det det"), std::string::npos);
}

// DET_MASTER in Determined's forms is the master's REST address, written one way (so that one
// master has one session and one kept key); tcp:// names the gateway itself.
TEST(MasterUrlTest, DeterminedsFormsOfTheAddressAreOneUrl) {
  const std::pair<const char*, const char*> forms[] = {
      {"gpu-cluster", "http://gpu-cluster:8080"},
      {"10.0.0.5:8080", "http://10.0.0.5:8080"},
      {"10.0.0.5:9000/", "http://10.0.0.5:9000"},
      {"http://gpu-cluster", "http://gpu-cluster:80"},
      {"https://gpu-cluster", "https://gpu-cluster:443"},
      {"https://gpu-cluster:8443/det/", "https://gpu-cluster:8443/det"},
      {"[::1]:8080", "http://[::1]:8080"},
      {"tcp://10.0.0.5:8090", "tcp://10.0.0.5:8090"},
  };
  for (const auto& [given, canonical] : forms) {
    EXPECT_EQ(CanonicalMaster(given).value_or("error"), canonical) << given;
  }
  for (const char* bad : {"http://", ":8080", "gpu:80x", "alice@gpu:8080", "gpu:8080/?x=1",
                          "ftp://gpu:21", "gpu cluster"}) {
    const Result<std::string> refused = CanonicalMaster(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find(bad), std::string::npos) << "names what was given";
    EXPECT_NE(refused.status().message().find("host:port"), std::string::npos) << "and the forms";
  }
}

// det -m http(s)://... reads the gateway's port from GET /api/v1/master's body.
TEST(MasterUrlTest, TheGatewayPortComesFromTheMastersInfo) {
  EXPECT_TRUE(IsMasterUrl("http://10.0.0.5:8080"));
  EXPECT_TRUE(IsMasterUrl("https://master.example.com"));
  EXPECT_FALSE(IsMasterUrl("10.0.0.5:8090"));
  EXPECT_FALSE(IsMasterUrl("tcp://10.0.0.5:8090"));
  EXPECT_EQ(GatewayPortOfMasterInfo(R"({"version": "1", "gateway_port": 8090})").value_or(0), 8090);
  for (const char* body : {R"({"version": "1"})", R"({"gateway_port": "8090"})",
                           R"({"gateway_port": 70000})", "<html>", R"([8090])"}) {
    auto port = GatewayPortOfMasterInfo(body);
    ASSERT_FALSE(port.ok()) << body;
    EXPECT_NE(port.status().message().find("no gateway port"), std::string::npos);
  }
}

// ... and its CURVE key: "" from a plaintext master, refused when it is not a key.
TEST(MasterUrlTest, TheGatewayKeyComesFromTheMastersInfo) {
  const std::string key = bus::GenerateCurveKeyPair()->public_key;
  EXPECT_EQ(GatewayKeyOfMasterInfo(nlohmann::json{{"gateway_public_key", key}}.dump()).value_or(""),
            key);
  EXPECT_EQ(GatewayKeyOfMasterInfo(R"({"gateway_port": 8090})").value_or("x"), "");
  EXPECT_EQ(GatewayKeyOfMasterInfo(R"({"gateway_public_key": ""})").value_or("x"), "");
  for (const char* body : {R"({"gateway_public_key": "short"})", R"({"gateway_public_key": 5})"}) {
    EXPECT_FALSE(GatewayKeyOfMasterInfo(body).ok()) << body;
  }
}

// Over http, the first key a master's URL presents is kept (once its gateway answered with it:
// Remember); another one later is refused, naming both, until forgotten or vouched for by https.
TEST(KnownMastersTest, TheFirstKeyIsKeptAndAnotherIsRefusedUntilForgotten) {
  const auto dir = std::filesystem::temp_directory_path() / ("det-known-" + bus::RandomId());
  KnownMasters known((dir / "known_masters.json").string());
  const std::string first = bus::GenerateCurveKeyPair()->public_key;
  const std::string other = bus::GenerateCurveKeyPair()->public_key;
  const MasterGateway m_first{"tcp://m:8090", first}, m_other{"tcp://m:8090", other};
  bool first_use = false;
  ASSERT_TRUE(known.Check("http://m:8080", first, &first_use).ok());
  EXPECT_TRUE(first_use);
  ASSERT_TRUE(known.Check("http://m:8080", other, &first_use).ok()) << "a check keeps nothing";
  ASSERT_TRUE(known.Remember("http://m:8080", m_first, /*vouched=*/false).ok());
  ASSERT_TRUE(known.Check("http://m:8080", first, &first_use).ok());
  EXPECT_FALSE(first_use);
  ASSERT_TRUE(known.Remember("http://n:8080", {"tcp://n:8090", other}, false).ok())
      << "each master its own";
  const Status changed = known.Check("http://m:8080", other, &first_use);
  EXPECT_EQ(changed.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(changed.message().find(first), std::string::npos) << changed.message();
  EXPECT_NE(changed.message().find(other), std::string::npos);
  EXPECT_NE(changed.message().find("det master forget-key"), std::string::npos);
  EXPECT_EQ(known.Remember("http://m:8080", m_other, false).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(known.Kept("http://m:8080"), first);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "known_masters.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_TRUE(known.Forget("http://m:8080").ok());
  ASSERT_TRUE(known.Check("http://m:8080", other, &first_use).ok());
  EXPECT_TRUE(first_use);
  ASSERT_TRUE(known.Remember("http://m:8080", m_first, false).ok());
  ASSERT_TRUE(known.Remember("http://m:8080", m_other, /*vouched=*/true).ok());
  EXPECT_EQ(known.Kept("http://m:8080"), other) << "a certificate vouches over what was kept";
  // A file that does not read loses no key silently: every check fails, naming it.
  std::ofstream(dir / "known_masters.json") << "{\"http://m:8080\": ";
  const Status unreadable = known.Check("http://m:8080", first, &first_use);
  EXPECT_EQ(unreadable.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(unreadable.message().find("known_masters.json"), std::string::npos);
  EXPECT_EQ(known.Remember("http://m:8080", m_first, false).code(),
            StatusCode::kFailedPrecondition);
  std::filesystem::remove_all(dir);
}

// det processes that change one config file at once each see the others' changes: none is lost.
TEST(ConfigFilesTest, ChangesMadeAtOnceAreAllKept) {
  const auto dir = std::filesystem::temp_directory_path() / ("det-config-" + bus::RandomId());
  const std::string path = (dir / "auth.json").string();
  constexpr int kWriters = 4, kEach = 25;
  std::vector<pid_t> writers;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {  // a det process of its own: flock locks are per open file, across processes
      for (int i = 0; i < kEach; ++i) {
        const std::string name = std::to_string(w) + "-" + std::to_string(i);
        const Status changed =
            UpdateJsonFile(path, "the test's file", false, [&](nlohmann::json& doc) {
              doc[name] = i;
              return Status::Ok();
            });
        if (!changed.ok()) ::_exit(1);
      }
      ::_exit(0);
    }
    writers.push_back(pid);
  }
  for (pid_t pid : writers) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(LoadJsonFile(path).size(), static_cast<size_t>(kWriters * kEach));
  std::filesystem::remove_all(dir);
}

// det's own key pair is made once, private, and the same at every later start.
TEST(KnownMastersTest, DetsOwnKeyIsMadeOnceAndKeptPrivate) {
  const auto dir = std::filesystem::temp_directory_path() / ("det-own-" + bus::RandomId());
  ::setenv("DET_CLIENT_KEY_FILE", (dir / "client.key").c_str(), 1);
  auto made = OwnClientKey("");
  auto again = OwnClientKey("");
  ::unsetenv("DET_CLIENT_KEY_FILE");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(made->public_key, again->public_key);
  EXPECT_FALSE(made->secret_key.empty());
  struct stat st {};
  ASSERT_EQ(::stat((dir / "client.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::filesystem::remove_all(dir);
}

// What det and its relay send each other: frames come back whole, in order, however they arrive.
TEST(RelayFrameTest, FramesComeBackWholeAndInOrderAndOversizedOnesAreRefused) {
  std::string stream = RelayFrame("first") + RelayFrame("") + RelayFrame(std::string(70000, 'x'));
  std::string buffer;
  std::vector<std::string> got;
  bool too_large = false;
  for (char byte : stream) {  // one byte at a time: the worst a socket can do
    buffer += byte;
    while (auto frame = TakeRelayFrame(buffer, &too_large)) got.push_back(*frame);
  }
  EXPECT_FALSE(too_large);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "first");
  EXPECT_EQ(got[1], "");
  EXPECT_EQ(got[2], std::string(70000, 'x'));
  EXPECT_TRUE(buffer.empty());
  const uint32_t huge = kMaxRelayFrameBytes + 1;
  std::string oversized(reinterpret_cast<const char*>(&huge), sizeof huge);
  EXPECT_FALSE(TakeRelayFrame(oversized, &too_large).has_value());
  EXPECT_TRUE(too_large);
}

TEST(RelayTargetTest, TheRelayReadsBackWhatDetWroteAndRefusesAnythingElse) {
  RelayTarget curve{"tcp://10.0.0.1:8090", {}};
  curve.security.mode = bus::SocketSecurity::Mode::kCurveClient;
  auto keys = bus::GenerateCurveKeyPair();
  ASSERT_TRUE(keys.ok());
  curve.security.own = *keys;
  curve.security.server_public_key = bus::GenerateCurveKeyPair()->public_key;
  std::optional<RelayTarget> read = ReadRelayTarget(WriteRelayTarget(curve));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->endpoint, curve.endpoint);
  EXPECT_EQ(read->security.mode, bus::SocketSecurity::Mode::kCurveClient);
  EXPECT_EQ(read->security.own.secret_key, curve.security.own.secret_key);
  EXPECT_EQ(read->security.server_public_key, curve.security.server_public_key);
  std::optional<RelayTarget> plain = ReadRelayTarget(WriteRelayTarget({"tcp://h:1", {}}));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->security.mode, bus::SocketSecurity::Mode::kPlaintext);
  for (const char* bad : {"", "tcp://h:1\n", "tcp://h:1\nrot13\n\n\n\n",
                          "tcp://h:1\ncurve\nshort\nshort\nshort\n", "\nplaintext\n\n\n\n"}) {
    EXPECT_FALSE(ReadRelayTarget(bad).has_value()) << bad;
  }
}

// A folder others may enter is no place for a relay: det then goes to the master itself.
TEST(RelaySocketPathTest, OnlyAPrivateFolderOfThisUserHoldsRelays) {
  namespace fs = std::filesystem;
  const fs::path runtime =
      fs::temp_directory_path() / ("det-relay-path-" + std::to_string(getpid()));
  fs::remove_all(runtime);
  fs::create_directories(runtime);
  const char* saved = std::getenv("XDG_RUNTIME_DIR");
  const std::string kept = saved ? saved : "";
  setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
  const RelayTarget target{"tcp://127.0.0.1:8090", {}};
  const std::string path = RelaySocketPath(target);
  EXPECT_EQ(path.rfind((runtime / "det" / "relay-").string(), 0), 0u) << path;
  struct stat st {};
  ASSERT_EQ(stat((runtime / "det").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(RelaySocketPath(target), path) << "the same target, the same relay";
  EXPECT_NE(RelaySocketPath({"tcp://127.0.0.1:8091", {}}), path);
  chmod((runtime / "det").c_str(), 0755);
  EXPECT_EQ(RelaySocketPath(target), "");
  chmod((runtime / "det").c_str(), 0700);
  setenv("DET_RELAY", "0", 1);
  EXPECT_EQ(RelaySocketPath(target), "");
  unsetenv("DET_RELAY");
  if (saved) {
    setenv("XDG_RUNTIME_DIR", kept.c_str(), 1);
  } else {
    unsetenv("XDG_RUNTIME_DIR");
  }
  fs::remove_all(runtime);
}

}  // namespace
}  // namespace det::cli
