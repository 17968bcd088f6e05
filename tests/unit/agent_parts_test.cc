// The agent's pure parts: nvidia-smi parsing, slot discovery rules, log batching, and reading
// interruption notices.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent_config.h"
#include "agent/devices.h"
#include "agent/docker_runtime.h"
#include "agent/interruption_watch.h"
#include "agent/log_shipper.h"
#include "agent/shim/shim_protocol.h"
#include "agent/shim/shim_server.h"
#include "agent/shim/workload_shim.h"
#include "agent/workload_spawn.h"
#include "tests/testing/test_util.h"

namespace det::agent {
namespace {

constexpr const char* kTwoGpus =
    "0, GPU-1111aaaa-0000-0000-0000-000000000001, NVIDIA H100 80GB HBM3, 81559, 3, 1\n"
    "1, GPU-2222bbbb-0000-0000-0000-000000000002, NVIDIA H100 80GB HBM3, 81559, [N/A], 0\n";

CommandRunner Answer(Result<std::string> answer) {
  return [answer](const std::vector<std::string>&) { return answer; };
}

TEST(NvidiaSmiTest, ParsesEveryGpuWithUuidNameAndMemory) {
  auto gpus = ParseNvidiaSmi(kTwoGpus);
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].index, 0);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-1111aaaa-0000-0000-0000-000000000001");
  EXPECT_EQ((*gpus)[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*gpus)[0].memory_mib, 81559);
  EXPECT_EQ((*gpus)[0].utilization_percent, 3);
  EXPECT_EQ((*gpus)[1].utilization_percent, 0);  // [N/A]
}

TEST(NvidiaSmiTest, MalformedOutputNamesTheLineAndField) {
  auto short_line = ParseNvidiaSmi("0, GPU-1, H100\n");
  EXPECT_NE(short_line.status().message().find("line 1"), std::string::npos);
  EXPECT_NE(short_line.status().message().find("expected 6 fields"), std::string::npos);
  auto bad_memory = ParseNvidiaSmi("\n0, GPU-1, H100, lots, 0, 0\n");
  EXPECT_NE(bad_memory.status().message().find("line 2: memory.total \"lots\""), std::string::npos)
      << bad_memory.status().message();
}

TEST(DiscoverSlotsTest, AutoUsesGpusWhenPresentElseOneCpuSlot) {
  auto gpus = DiscoverSlots({"auto"}, Answer(std::string(kTwoGpus)));
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[1].type, "cuda");
  EXPECT_EQ((*gpus)[1].uuid, "GPU-2222bbbb-0000-0000-0000-000000000002");
  EXPECT_EQ((*gpus)[1].memory_mib, 81559);

  auto cpu = DiscoverSlots({"auto"}, Answer(NotFound("cannot run nvidia-smi")));
  ASSERT_TRUE(cpu.ok());
  ASSERT_EQ(cpu->size(), 1u);
  EXPECT_EQ((*cpu)[0].type, "cpu");
}

TEST(DiscoverSlotsTest, CudaWithoutGpusIsAnErrorThatSaysWhy) {
  auto none = DiscoverSlots({"cuda"}, Answer(NotFound("cannot run nvidia-smi: not found")));
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("nvidia-smi"), std::string::npos);
}

TEST(DiscoverSlotsTest, VisibleGpusSelectsByIndexOrUuidAndRejectsUnknownOnes) {
  DeviceConfig config{"cuda", 0, {"GPU-2222bbbb-0000-0000-0000-000000000002"}};
  auto one = DiscoverSlots(config, Answer(std::string(kTwoGpus)));
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].id, "1");
  config.visible_gpus = {"7"};
  auto unknown = DiscoverSlots(config, Answer(std::string(kTwoGpus)));
  EXPECT_NE(unknown.status().message().find("\"7\""), std::string::npos);
}

TEST(DiscoverSlotsTest, NoneAndArtificialSlotsNeedNoDiscovery) {
  auto never = Answer(Internal("must not be asked"));
  EXPECT_TRUE(DiscoverSlots({"none"}, never)->empty());
  EXPECT_EQ(DiscoverSlots({"cpu"}, never)->size(), 1u);
  EXPECT_EQ(DiscoverSlots({"auto", 64}, never)->size(), 64u);
}

TEST(LogShipperTest, BatchIsDueWhenFullOrOldAndKeptUntilConfirmed) {
  LogShipper shipper("inc-1", {.max_lines = 2, .max_delay = std::chrono::milliseconds(50)});
  const MonoTime t0{};
  shipper.Add("a.1", "a", {1, "stdout", "one", 0}, t0);
  EXPECT_TRUE(shipper.TakeDue(t0).empty());
  EXPECT_EQ(shipper.NextDue(), t0 + std::chrono::milliseconds(50));
  auto old = shipper.TakeDue(t0 + std::chrono::milliseconds(50));
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].batch, 1u);

  shipper.Add("a.1", "a", {2, "stdout", "two", 4}, t0);
  shipper.Add("a.1", "a", {3, "stderr", "three", 0}, t0);
  auto full = shipper.TakeDue(t0);
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0].batch, 2u);
  EXPECT_EQ(full[0].lines.size(), 2u);
  EXPECT_EQ(shipper.unconfirmed(), 2u);

  EXPECT_EQ(shipper.OldestUnconfirmedOffset("a.1", "stdout"), 0);
  shipper.Confirmed("a.1", "another-agent", 1);  // not ours: ignored
  EXPECT_EQ(shipper.unconfirmed(), 2u);
  shipper.Confirmed("a.1", "inc-1", 1);
  auto kept = shipper.Unconfirmed();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].batch, 2u);
  EXPECT_EQ(kept[0].incarnation, "inc-1");
  EXPECT_EQ(shipper.OldestUnconfirmedOffset("a.1", "stdout"), 4);
  EXPECT_EQ(shipper.OldestUnconfirmedOffset("a.1", "stderr"), 0);
  shipper.Confirmed("a.1", "inc-1", 2);
  EXPECT_FALSE(shipper.OldestUnconfirmedOffset("a.1", "stdout").has_value());
}

TEST(LogShipperTest, TakeAllSealsTheRestOfOneAllocation) {
  LogShipper shipper("inc-1");
  shipper.Add("a.1", "a", {1, "stdout", "x"}, MonoTime{});
  shipper.Add("b.1", "b", {1, "stdout", "y"}, MonoTime{});
  auto rest = shipper.TakeAll("a.1", MonoTime{});
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].lines[0].text, "x");
  EXPECT_TRUE(shipper.TakeAll("a.1", MonoTime{}).empty());
  EXPECT_EQ(shipper.NextDue(), MonoTime{} + std::chrono::milliseconds(50));
  shipper.Forget("a.1");
  EXPECT_EQ(shipper.unconfirmed(), 0u);
}

}  // namespace
}  // namespace det::agent

namespace det::agent {
namespace {

TEST(LogShipperTest, ABacklogReadAtOnceIsCutIntoBatchesOfMaxLines) {
  LogShipper shipper("inc-1", {.max_lines = 3});
  for (int i = 0; i < 7; ++i) {
    shipper.Add("a.1", "a", {i, "stdout", "l" + std::to_string(i), i * 3}, MonoTime{});
  }
  EXPECT_EQ(shipper.NextDue(), MonoTime{});  // full batches are due now
  auto batches = shipper.TakeAll("a.1", MonoTime{});
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].lines.size(), 3u);
  EXPECT_EQ(batches[1].lines.size(), 3u);
  EXPECT_EQ(batches[2].lines.size(), 1u);
  EXPECT_EQ(batches[2].batch, 3u);
  EXPECT_EQ(batches[2].lines[0].text, "l6");
}

TEST(LogShipperTest, BatchesAreCutByBytesAndAnAllocationsWindowFillsUntilConfirmed) {
  LogShipper shipper("inc-1", {.max_lines = 100, .max_batch_bytes = 10, .window = 2});
  const MonoTime t0{};
  shipper.Add("a.1", "a", {1, "stdout", "123456", 0}, t0);
  EXPECT_FALSE(shipper.Full("a.1"));
  shipper.Add("a.1", "a", {2, "stdout", "7890", 7}, t0);  // 10 bytes: sealed
  EXPECT_FALSE(shipper.Full("a.1"));
  shipper.Add("a.1", "a", {3, "stdout", "abcdefghij", 12}, t0);
  EXPECT_TRUE(shipper.Full("a.1"));
  EXPECT_FALSE(shipper.Full("b.1"));  // each allocation has its own window
  auto due = shipper.TakeDue(t0);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].lines.size(), 2u);
  shipper.Confirmed("a.1", "inc-1", 1);
  EXPECT_FALSE(shipper.Full("a.1"));
}

TEST(LogShipperTest, AnUnconfirmedBatchIsOverdueOnceAfterItsPause) {
  LogShipper shipper("inc-1", {.max_lines = 1});
  const MonoTime t0{};
  shipper.Add("a.1", "a", {1, "stdout", "x", 0}, t0);
  ASSERT_EQ(shipper.TakeDue(t0).size(), 1u);
  EXPECT_TRUE(shipper.Overdue(t0 + std::chrono::seconds(29), std::chrono::seconds(30)).empty());
  EXPECT_EQ(shipper.Overdue(t0 + std::chrono::seconds(30), std::chrono::seconds(30)).size(), 1u);
  EXPECT_TRUE(shipper.Overdue(t0 + std::chrono::seconds(31), std::chrono::seconds(30)).empty());
  shipper.Confirmed("a.1", "inc-1", 1);
  EXPECT_TRUE(shipper.Overdue(t0 + std::chrono::seconds(90), std::chrono::seconds(30)).empty());
}

}  // namespace
}  // namespace det::agent

namespace det::agent {
namespace {

TEST(InterruptionNoticeTest, Ec2sInstanceActionIsReadWithItsTime) {
  Result<InterruptionNotice> notice =
      ParseEc2InstanceAction(R"({"action": "terminate", "time": "2026-11-26T08:22:00Z"})");
  ASSERT_TRUE(notice.ok()) << notice.status().ToString();
  EXPECT_EQ(notice->reason, "EC2 spot interruption: terminate at 2026-11-26T08:22:00Z");
  EXPECT_EQ(notice->deadline, *ParseRfc3339Utc("2026-11-26T08:22:00Z"));
}

TEST(InterruptionNoticeTest, AnythingElseIsAnErrorQuotingIt) {
  EXPECT_NE(ParseEc2InstanceAction("<html>").status().message().find("not EC2's"),
            std::string::npos);
  EXPECT_NE(ParseEc2InstanceAction(R"({"action": "stop", "time": "soon"})")
                .status()
                .message()
                .find("time \"soon\" is not an RFC 3339 time"),
            std::string::npos);
}

TEST(InterruptionNoticeTest, OnlyKnownCloudsAreWatched) {
  Result<AgentConfig> config = ParseAgentConfig(YAML::Load("interruption_notice: azure"));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("interruption_notice"), std::string::npos);
  EXPECT_EQ(ParseAgentConfig(YAML::Load("interruption_notice: gcp"))->interruption_notice, "gcp");
}

// Determined's container_master_host and container_master_port: DET_MASTER as containers see it.
TEST(ContainerMasterTest, TheMastersAddressTakesTheContainersHostAndPort) {
  Result<AgentConfig> config = ParseAgentConfig(
      YAML::Load("container_master_host: host.docker.internal\ncontainer_master_port: 8443"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->container_master_host, "host.docker.internal");
  EXPECT_EQ(config->container_master_port, 8443);
  EXPECT_FALSE(ParseAgentConfig(YAML::Load("container_master_port: 70000")).ok());

  EXPECT_EQ(WithHostAndPort("http://127.0.0.1:8080", "", 0), "http://127.0.0.1:8080");
  EXPECT_EQ(WithHostAndPort("http://127.0.0.1:8080", "172.17.0.1", 0), "http://172.17.0.1:8080");
  EXPECT_EQ(WithHostAndPort("https://master:8443/api", "", 9000), "https://master:9000/api");
  EXPECT_EQ(WithHostAndPort("http://[::1]:8080", "gw", 81), "http://gw:81");
  EXPECT_EQ(WithHostAndPort("http://[::1]", "", 81), "http://[::1]:81");
  EXPECT_EQ(WithHostAndPort("http://master", "m2", 0), "http://m2");
}

// The watch asks until a notice comes, then keeps it; errors do not stop it.
TEST(InterruptionWatchTest, PollsUntilANoticeComesAndKeepsIt) {
  std::atomic<int> calls{0};
  InterruptionWatch watch(
      [&]() -> Result<std::optional<InterruptionNotice>> {
        const int call = ++calls;
        if (call == 1) return Unavailable("metadata service not answering");
        if (call < 4) return Result<std::optional<InterruptionNotice>>(std::nullopt);
        return Result<std::optional<InterruptionNotice>>(
            std::optional<InterruptionNotice>(InterruptionNotice{"going", 42}));
      },
      std::chrono::milliseconds(5));
  ASSERT_TRUE(det::testing::WaitFor([&] { return watch.notice().has_value(); }));
  EXPECT_EQ(*watch.notice(), (InterruptionNotice{"going", 42}));
  const int seen = calls.load();
  // A negative, so real time: six periods for a question that should not come.
  EXPECT_FALSE(
      det::testing::WaitFor([&] { return calls.load() != seen; }, std::chrono::milliseconds(30)))
      << "no more questions once the notice came";
}

// A shim server's request: read back as written, whatever the bytes; anything else refused.
TEST(ShimRequestTest, ReadsBackWhatWasWrittenAndRefusesWhatWasNot) {
  const ShimRequest sent{"/work/a b",
                         {"/bin/sh", "-c", "echo 'x=y'; exit 3", ""},
                         {"A=1", "EMPTY=", "UTF8=\xc3\xa9t\xc3\xa9"}};
  const std::string payload = EncodeShimRequest(sent);
  ShimRequest got;
  ASSERT_TRUE(DecodeShimRequest(payload, &got));
  EXPECT_EQ(got.dir, sent.dir);
  EXPECT_EQ(got.argv, sent.argv);
  EXPECT_EQ(got.env, sent.env);
  // A NUL inside an entry ends it, as exec would: it never makes an entry of its own.
  const std::string smuggled = std::string("FOO=x") + '\0' + "DET_RUN_AS=0:0:0:/root:root";
  ShimRequest cut;
  ASSERT_TRUE(DecodeShimRequest(
      EncodeShimRequest({"/d", {std::string("sh") + '\0' + "evil", "-c"}, {smuggled, "B=2"}}),
      &cut));
  EXPECT_EQ(cut.argv, (std::vector<std::string>{"sh", "-c"}));
  EXPECT_EQ(cut.env, (std::vector<std::string>{"FOO=x", "B=2"}));
  ShimRequest no_env;
  ASSERT_TRUE(DecodeShimRequest(EncodeShimRequest({"/d", {"true"}, {}}), &no_env));
  EXPECT_TRUE(no_env.env.empty());
  auto joined = [](std::initializer_list<std::string> parts, bool final_nul) {
    std::string text;
    for (const std::string& part : parts) text += part + '\0';
    if (!final_nul) text.pop_back();
    return text;
  };
  const std::string bad[] = {
      "",                                           // nothing
      joined({"/d", "1", "true"}, false),           // no final NUL
      joined({"/d", "0"}, true),                    // no argv
      joined({"/d", "2", "true"}, true),            // fewer entries than the count
      joined({"/d", "x", "true"}, true),            // a count that is no number
      joined({"", "1", "true"}, true),              // no folder
      joined({"/d", "99999999999", "true"}, true),  // a count past any request
  };
  for (const std::string& payload : bad) {
    ShimRequest untouched{"kept", {"kept"}, {}};
    EXPECT_FALSE(DecodeShimRequest(payload, &untouched)) << payload.size();
    EXPECT_EQ(untouched.dir, "kept");
  }
}

// The shim's instruction to switch accounts: what the agent writes, the shim reads back.
TEST(RunAsTest, TheAgentsVariableIsWhatTheShimReads) {
  // A user this host does not know: the primary group alone, the task's folder as home.
  const std::string variable =
      RunAsVariable({4242, 4243, "det-no-such-user-x", "somegroup"}, "/work/a-1");
  EXPECT_EQ(variable, "DET_RUN_AS=4242:4243:4243:/work/a-1:det-no-such-user-x");
  RunAs as;
  ASSERT_TRUE(ParseRunAs(variable.substr(variable.find('=') + 1), &as));
  EXPECT_EQ(as.uid, 4242u);
  EXPECT_EQ(as.gid, 4243u);
  EXPECT_EQ(as.groups, (std::vector<gid_t>{4243}));
  EXPECT_EQ(as.home, "/work/a-1");
  EXPECT_EQ(as.user, "det-no-such-user-x");
  // A user it knows (root here): its home and groups from the account database.
  const std::string root = RunAsVariable({0, 0, "root", "root"}, "/work/a-2");
  EXPECT_EQ(root.rfind("DET_RUN_AS=0:0:0", 0), 0u) << root;
  EXPECT_NE(root.find(":/root:root"), std::string::npos) << root;
}

TEST(RunAsTest, AnythingMalformedIsRefused) {
  RunAs as;
  for (const char* bad : {"", "1:2:3:/h", "x:2:3:/h:u", "1:2::/h:u", "1:2:3,:/h:u", "-1:2:3:/h:u",
                          "1:2:3:/h:", "4294967296:2:3:/h:u", "1:2:3,x:/h:u"}) {
    EXPECT_FALSE(ParseRunAs(bad, &as)) << bad;
  }
  EXPECT_TRUE(ParseRunAs("1:2:3,4,5:/home/u:u", &as));
  EXPECT_EQ(as.groups, (std::vector<gid_t>{3, 4, 5}));
}

// The account a task runs as when the master names none: from this host's account database.
TEST(RunAsTest, TheDefaultTaskUserIsAnAccountOfThisHost) {
  auto nobody = HostAccount("nobody");
  ASSERT_TRUE(nobody.ok()) << nobody.status().ToString();
  EXPECT_EQ(nobody->uid, 65534);  // Debian's
  EXPECT_EQ(nobody->gid, 65534);
  EXPECT_EQ(nobody->group, "nogroup");
  auto missing = HostAccount("det-no-such-user-x");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "no account \"det-no-such-user-x\" on this host (getpwnam)");
  auto config = ParseAgentConfig(YAML::Load("default_task_user: det-task"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->default_task_user, "det-task");
  EXPECT_EQ(ParseAgentConfig(YAML::Node())->default_task_user, "nobody");
}

// As root, the agent keeps its files from tasks and opens the checkpoint folder to them.
TEST(RunAsTest, SecretsAreClosedAndTheSharedFolderIsSticky) {
  if (geteuid() != 0) GTEST_SKIP() << "only a root agent changes modes; this test is not root";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("det-runas-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string key = (dir / "agent.key").string();
  std::ofstream(key) << "secret\n";
  std::filesystem::permissions(key, std::filesystem::perms(0644));
  KeepFromTasks(key, "the agent's key");
  EXPECT_EQ(std::filesystem::status(key).permissions(), std::filesystem::perms(0600));

  const std::string shared = (dir / "checkpoints" / "deeper").string();
  ASSERT_TRUE(OpenSharedFolder(shared).ok());
  struct stat st {};
  ASSERT_EQ(stat(shared.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  // Another owner's folder is its operator's choice: left as it is.
  const std::string theirs = (dir / "theirs").string();
  std::filesystem::create_directories(theirs);
  ASSERT_EQ(chown(theirs.c_str(), 4242, 4242), 0);
  ASSERT_EQ(chmod(theirs.c_str(), 0750), 0);
  ASSERT_TRUE(OpenSharedFolder(theirs).ok());
  ASSERT_EQ(stat(theirs.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  std::filesystem::remove_all(dir);
}

// The shim (in a child of the test: it ignores stop signals) run as root with DET_RUN_AS naming
// nobody and `program`; its exit code, and DIR/exit_status in *ending.
int RunShimAsNobody(const std::filesystem::path& dir, std::vector<std::string> program,
                    std::string* ending) {
  program.insert(program.begin(), dir.string());
  std::vector<char*> argv;
  for (std::string& arg : program) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string run_as = "65534:65534:65534:" + dir.string() + ":nobody";
  const pid_t pid = fork();
  if (pid == 0) {
    setenv(kRunAsVariable, run_as.c_str(), 1);
    _exit(RunWorkloadShim(static_cast<int>(program.size()), argv.data()));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(dir / kExitStatusFile);
  std::getline(in, *ending);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RunAsTest, TheShimRunsTheWorkloadAsTheAccountAndReportsWhatCannotStart) {
  if (geteuid() != 0) GTEST_SKIP() << "only root switches accounts; this test is not root";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("det-shim-as-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms(0777));
  std::string ending;
  EXPECT_EQ(
      RunShimAsNobody(
          dir, {"/bin/sh", "-c", "echo $(id -u):$(id -g):$(umask):$HOME > $HOME/id.txt"}, &ending),
      0);
  EXPECT_EQ(ending, "exit 0");
  std::ifstream id(dir / "id.txt");
  std::string line;
  std::getline(id, line);
  EXPECT_EQ(line, "65534:65534:0077:" + dir.string());

  // As nobody the program in a 0700 folder of root's cannot be run: a start failure, with why.
  const std::filesystem::path closed = dir / "closed";
  std::filesystem::create_directories(closed);
  std::filesystem::permissions(closed, std::filesystem::perms(0700));
  EXPECT_EQ(RunShimAsNobody(dir, {(closed / "script").string()}, &ending), 127);
  EXPECT_EQ(ending, "start-failed " + (closed / "script").string() + ": Permission denied");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace det::agent
