// Users, sessions and access tokens end to end: the real det against a real master.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testing/cluster_fixture.h"
#include "tests/testing/rest_client.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

using testing::ClusterProcessTest;
using testing::Shell;

constexpr const char* kAlicePassword = "alice-password-1";

class UserProcessTest : public ClusterProcessTest {
 protected:
  // det as `user`, with "rc=N" (the exit code) on the last line.
  std::string DetRc(const std::string& user, const std::string& password, const std::string& args) {
    return DetAs(user, password, args + "; echo rc=$?");
  }
  // det with only an access or session token (no login, no cache).
  std::string DetWithToken(const std::string& token, const std::string& args) {
    return Shell(DetCommand(
        "DET_USER_TOKEN=" + token + " DET_AUTH_FILE=" + (dir_ / "no-cache.json").string(),
        args + "; echo rc=$?"));
  }
};

TEST_F(UserProcessTest, EveryCommandButLoginNeedsAUser) {
  const std::string anonymous =
      Shell(DetCommand("DET_AUTH_FILE=" + (dir_ / "none.json").string(), "agent list; echo rc=$?"));
  EXPECT_NE(anonymous.find("not logged in: run `det user login` first"), std::string::npos)
      << anonymous;
  EXPECT_NE(anonymous.find("rc=1"), std::string::npos) << anonymous;
  // master info needs no login (it tells a user which cluster they reach).
  EXPECT_NE(Shell(DetCommand("DET_AUTH_FILE=" + (dir_ / "none.json").string(), "master info"))
                .find("cluster id:"),
            std::string::npos);
  const std::string wrong = DetRc("admin", "not-the-password", "agent list");
  EXPECT_NE(wrong.find("invalid username or password"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("rc=1"), std::string::npos) << wrong;
  EXPECT_NE(DetRc("nobody", "whatever-pass", "agent list").find("invalid username or password"),
            std::string::npos);
  const std::string admin = Det("--json user whoami");
  EXPECT_NE(admin.find("\"username\":\"admin\",\"admin\":true"), std::string::npos) << admin;
}

TEST_F(UserProcessTest, AdminsCreateUsersWhoMayNotDoAdminWork) {
  const std::string created = CreateUser("alice", kAlicePassword);
  EXPECT_NE(created.find("created user \"alice\"\nrc=0"), std::string::npos) << created;
  EXPECT_NE(CreateUser("alice", kAlicePassword).find("already exists"), std::string::npos);
  EXPECT_NE(CreateUser("bob", "short").find("at least 8 characters"), std::string::npos);
  EXPECT_NE(CreateUser("bad/name", kAlicePassword).find("is not allowed"), std::string::npos);

  EXPECT_NE(DetRc("alice", kAlicePassword, "user whoami").find("you are \"alice\"\nrc=0"),
            std::string::npos);
  const std::string disable = DetRc("alice", kAlicePassword, "agent disable some-agent");
  EXPECT_NE(disable.find("agent.enable is for admins only (you are \"alice\")"), std::string::npos)
      << disable;
  EXPECT_NE(disable.find("rc=1"), std::string::npos);
  const std::string create =
      Shell("echo password-of-bob | " +
            DetCommand("DET_USER=alice DET_PASS=" + std::string(kAlicePassword) +
                           " DET_AUTH_FILE=" + (dir_ / "auth-alice.json").string(),
                       "user create bob"));
  EXPECT_NE(create.find("only an admin may create users"), std::string::npos) << create;
  const std::string others =
      DetRc("alice", kAlicePassword, "user change-password admin < /dev/null");
  EXPECT_NE(others.find("only an admin may change another user's password"), std::string::npos)
      << others;
  // What every user may do: run work and see the cluster.
  EXPECT_NE(DetRc("alice", kAlicePassword, "agent list").find("rc=0"), std::string::npos);
  const std::string users = Det("user list");
  EXPECT_NE(users.find("admin"), std::string::npos);
  EXPECT_NE(users.find("alice"), std::string::npos);
}

TEST_F(UserProcessTest, ChangedPasswordsDeactivationAndLogoutTakeEffectAtOnce) {
  ASSERT_NE(CreateUser("alice", kAlicePassword).find("rc=0"), std::string::npos);
  ASSERT_NE(DetRc("alice", kAlicePassword, "user whoami").find("rc=0"), std::string::npos);
  // Own password: the session in use stays; the old password no longer logs in.
  const std::string changed =
      Shell("printf 'alice-password-2\\n' | " +
            DetCommand("DET_USER=alice DET_PASS=" + std::string(kAlicePassword) +
                           " DET_AUTH_FILE=" + (dir_ / "auth-alice.json").string(),
                       "user change-password; echo rc=$?"));
  EXPECT_NE(changed.find("rc=0"), std::string::npos) << changed;
  EXPECT_NE(DetRc("alice", kAlicePassword, "user whoami").find("rc=0"), std::string::npos);
  EXPECT_NE(Shell(DetCommand("DET_USER=alice DET_PASS=" + std::string(kAlicePassword) +
                                 " DET_AUTH_FILE=" + (dir_ / "fresh.json").string(),
                             "user whoami"))
                .find("invalid username or password"),
            std::string::npos);
  EXPECT_NE(DetRc("alice", "alice-password-2", "user login alice < /dev/null").find("rc=0"),
            std::string::npos);

  // Deactivated: the cached session stops working, and no login is possible.
  EXPECT_NE(Det("user deactivate alice").find("deactivated \"alice\""), std::string::npos);
  EXPECT_NE(DetRc("alice", "", "user whoami").find("rc=1"), std::string::npos);
  EXPECT_NE(DetRc("alice", "alice-password-2", "user whoami").find("invalid username or password"),
            std::string::npos);
  EXPECT_NE(Det("user activate alice").find("activated \"alice\""), std::string::npos);
  EXPECT_NE(DetRc("alice", "alice-password-2", "user whoami").find("rc=0"), std::string::npos);

  // The last active admin stays.
  EXPECT_NE(Det("user deactivate admin").find("last active admin"), std::string::npos);

  // Logout ends the session on the master too.
  const std::string cache = (dir_ / "auth-alice.json").string();
  std::ifstream in(cache);
  const auto doc = nlohmann::json::parse(in);
  const std::string session = doc.begin().value()["tokens"]["alice"];
  EXPECT_NE(DetWithToken(session, "user whoami").find("rc=0"), std::string::npos);
  EXPECT_NE(DetRc("alice", "", "user logout").find("logged out \"alice\""), std::string::npos);
  const std::string after = DetWithToken(session, "user whoami");
  EXPECT_NE(after.find("the login session has ended"), std::string::npos) << after;
}

TEST_F(UserProcessTest, AccessTokensWorkUntilRevokedOrExpired) {
  ASSERT_NE(CreateUser("alice", kAlicePassword).find("rc=0"), std::string::npos);
  const std::string created =
      DetAs("alice", kAlicePassword, "--json token create --description ci --lifespan 2d");
  const auto token = nlohmann::json::parse(created, nullptr, false);
  ASSERT_TRUE(token.is_object()) << created;
  EXPECT_EQ(token["username"], "alice");
  EXPECT_EQ(token["description"], "ci");
  const int64_t lifespan_ns =
      token["expires_at"].get<int64_t>() - token["created_at"].get<int64_t>();
  EXPECT_NEAR(lifespan_ns / 1e9, 2 * 86400, 5);
  const std::string secret = token["token"];
  EXPECT_TRUE(secret.starts_with("deta_"));
  EXPECT_NE(DetWithToken(secret, "user whoami").find("you are \"alice\""), std::string::npos);

  // Alice sees her token; only an admin sees everyone's, and revokes others'.
  EXPECT_NE(DetAs("alice", kAlicePassword, "token list").find("ci"), std::string::npos);
  EXPECT_NE(DetRc("alice", kAlicePassword, "token list --all").find("only an admin"),
            std::string::npos);
  const std::string admin_token = Det("--json token create --lifespan never");
  const auto admin_json = nlohmann::json::parse(admin_token, nullptr, false);
  ASSERT_TRUE(admin_json.is_object()) << admin_token;
  EXPECT_EQ(admin_json["expires_at"], 0);
  EXPECT_NE(DetRc("alice", kAlicePassword,
                  "token revoke " + std::to_string(admin_json["id"].get<int64_t>()))
                .find("only an admin may revoke another user's token"),
            std::string::npos);
  const std::string all = Det("--json token list --all");
  EXPECT_NE(all.find("\"username\":\"alice\""), std::string::npos) << all;
  EXPECT_NE(all.find("\"username\":\"admin\""), std::string::npos) << all;

  EXPECT_NE(
      DetAs("alice", kAlicePassword, "token revoke " + std::to_string(token["id"].get<int64_t>()))
          .find("revoked token"),
      std::string::npos);
  const std::string revoked = DetWithToken(secret, "user whoami");
  EXPECT_NE(revoked.find("the access token is expired or revoked"), std::string::npos) << revoked;
  EXPECT_NE(DetWithToken("deta_forged", "agent list").find("rc=1"), std::string::npos);
  EXPECT_NE(DetWithToken("garbage", "agent list").find("not a det session or access token"),
            std::string::npos);
  EXPECT_NE(DetRc("alice", kAlicePassword, "token create --lifespan soon").find("--lifespan"),
            std::string::npos);
}

TEST_F(UserProcessTest, CachedSessionsOutliveAMasterRestart) {
  ASSERT_NE(DetRc("admin", testing::kAdminPassword, "user whoami").find("rc=0"), std::string::npos);
  RestartMaster();
  // No password this time: only the cached session can work, and it does.
  EXPECT_TRUE(testing::Eventually(
      [&] { return DetRc("admin", "", "user whoami").find("rc=0") != std::string::npos; },
      std::chrono::seconds(20)));
}

// The same rules over REST, with a plain HTTP client.
class UserRestTest : public UserProcessTest {
 protected:
  testing::RestAnswer Send(const std::string& method, const std::string& path,
                           const std::string& token, const std::string& body = "") {
    return testing::RestClient(std::stoi(rest_port_)).Send(method, path, token, body);
  }
  std::string Login(const std::string& user, const std::string& password) {
    const std::string token = testing::RestClient(std::stoi(rest_port_)).Login(user, password);
    EXPECT_FALSE(token.empty()) << user;
    return token;
  }
};

TEST_F(UserRestTest, LoginsUsersAndTokensAnswerWithTheRightStatus) {
  EXPECT_EQ(Send("GET", "/api/v1/me", "").status, 401);
  EXPECT_EQ(Send("GET", "/api/v1/users", "deta_unknown").status, 401);
  EXPECT_EQ(
      Send("POST", "/api/v1/auth/login", "", R"({"username":"admin","password":"nope"})").status,
      401);
  const std::string admin = Login("admin", testing::kAdminPassword);
  EXPECT_EQ(Send("GET", "/api/v1/me", admin).body["user"]["username"], "admin");

  // Malformed bodies: 400 naming what is wrong.
  testing::RestAnswer malformed = Send("POST", "/api/v1/users", admin, "{not json");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.body["message"], "request body: expected a JSON object");
  testing::RestAnswer missing =
      Send("POST", "/api/v1/users", admin, R"({"user":{"username":"alice"}})");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.body["message"], "password: is required (a string)");
  EXPECT_EQ(missing.body["error"]["error"], "password: is required (a string)");  // Determined's
  EXPECT_EQ(Send("POST", "/api/v1/users", admin, R"({"user":{"username":"alice"},"password":7})")
                .body["message"],
            "password: expected a string");

  testing::RestAnswer created =
      Send("POST", "/api/v1/users", admin,
           nlohmann::json{{"user", {{"username", "alice"}}}, {"password", kAlicePassword}}.dump());
  ASSERT_EQ(created.status, 200) << created.body.dump();
  EXPECT_EQ(created.body["user"]["admin"], false);
  const std::string alice_id = std::to_string(created.body["user"].value("id", 0));
  const std::string alice = Login("alice", kAlicePassword);
  EXPECT_EQ(Send("GET", "/api/v1/users/" + alice_id, admin).body["user"]["username"], "alice");
  EXPECT_EQ(Send("GET", "/api/v1/users/alice/by-username", alice).body["user"]["id"],
            created.body["user"]["id"]);
  const nlohmann::json admins = Send("GET", "/api/v1/users?admin=true", alice).body;
  ASSERT_EQ(admins["users"].size(), 1u) << admins.dump();
  EXPECT_EQ(admins["users"][0]["username"], "admin");
  EXPECT_EQ(admins["pagination"]["total"], 1);
  const std::string admin_id = std::to_string(admins["users"][0].value("id", 0));

  // Admin routes refuse a non-admin with 403.
  EXPECT_EQ(
      Send("POST", "/api/v1/users", alice, R"({"user":{"username":"bob"},"password":"12345678"})")
          .status,
      403);
  EXPECT_EQ(Send("PATCH", "/api/v1/users/" + admin_id, alice, R"({"active":false})").status, 403);
  EXPECT_EQ(Send("POST", "/api/v1/users/" + admin_id + "/password", alice, R"("12345678")").status,
            403);
  EXPECT_EQ(Send("GET", "/api/v1/tokens?username=admin", alice).status, 403);

  // Unknown ids: 404.
  EXPECT_EQ(Send("PATCH", "/api/v1/users/424242", admin, R"({"active":false})").status, 404);
  EXPECT_EQ(Send("PATCH", "/api/v1/tokens/424242", admin, R"({"setRevoked":true})").status, 404);
  EXPECT_EQ(Send("PATCH", "/api/v1/users/" + alice_id, admin, R"({})").status, 400);
  EXPECT_EQ(Send("PATCH", "/api/v1/users/" + alice_id, admin, R"({"displayName":"A"})").status,
            400);

  // A token made over REST (Determined's shapes) works over REST and is gone once revoked.
  testing::RestAnswer token =
      Send("POST", "/api/v1/tokens", alice,
           R"({"userId":)" + alice_id + R"(,"description":"rest","lifespan":"1h"})");
  ASSERT_EQ(token.status, 200) << token.body.dump();
  const std::string secret = token.body["token"];
  EXPECT_EQ(Send("GET", "/api/v1/me", secret).body["user"]["username"], "alice");
  const nlohmann::json listed = Send("GET", "/api/v1/tokens", alice).body;
  ASSERT_EQ(listed["tokenInfo"].size(), 1u) << listed.dump();
  const nlohmann::json& info = listed["tokenInfo"][0];
  EXPECT_EQ(info["id"], token.body["tokenId"]);
  EXPECT_EQ(info["userId"].get<int64_t>(), std::stoll(alice_id));
  EXPECT_EQ(info["description"], "rest");
  EXPECT_EQ(info["revoked"], false);
  EXPECT_EQ(info["tokenType"], "TOKEN_TYPE_ACCESS_TOKEN");
  EXPECT_TRUE(info.contains("expiry") && info.contains("createdAt")) << info.dump();
  EXPECT_EQ(listed["pagination"]["total"], 1);
  const std::string patch =
      "/api/v1/tokens/" + std::to_string(token.body["tokenId"].get<int64_t>());
  EXPECT_EQ(
      Send("PATCH", patch, alice, R"({"description":"renamed"})").body["tokenInfo"]["description"],
      "renamed");
  EXPECT_EQ(Send("PATCH", patch, alice, R"({"setRevoked":true})").body["tokenInfo"]["revoked"],
            true);
  EXPECT_EQ(Send("GET", "/api/v1/me", secret).status, 401);
  EXPECT_EQ(Send("GET", "/api/v1/tokens", alice).body["tokenInfo"].size(), 0u);  // active only
  EXPECT_EQ(Send("GET", "/api/v1/tokens?showInactive=true", alice).body["tokenInfo"].size(), 1u);

  // Logout ends the session.
  EXPECT_EQ(Send("POST", "/api/v1/auth/logout", alice).status, 200);
  EXPECT_EQ(Send("GET", "/api/v1/me", alice).status, 401);
  // The experiment routes are for users too.
  EXPECT_EQ(Send("GET", "/api/v1/experiments", "").status, 401);
  EXPECT_EQ(Send("GET", "/api/v1/experiments", admin).status, 200);
}

// Determined's basic rules: an experiment is its creator's; anyone may read, pause, cancel or
// kill it, only its owner or an admin may delete it.
TEST_F(UserRestTest, OnlyAnExperimentsOwnerOrAnAdminMayDeleteIt) {
  CreateUser("alice", kAlicePassword);
  CreateUser("bob", "bob-password-1");
  const std::string alice = Login("alice", kAlicePassword);
  const std::string bob = Login("bob", "bob-password-1");
  const std::string admin = Login("admin", testing::kAdminPassword);
  const std::string config =
      nlohmann::json{
          {"config",
           {{"name", "owned"},
            {"entrypoint", "python3 train.py"},
            {"searcher",
             {{"name", "single"}, {"metric", "loss"}, {"max_length", {{"batches", 10}}}}},
            {"checkpoint_storage",
             {{"type", "shared_fs"}, {"host_path", (dir_ / "checkpoints").string()}}}}}}
          .dump();
  auto created = [&](const std::string& token) {
    const testing::RestAnswer answer = Send("POST", "/api/v1/experiments", token, config);
    EXPECT_EQ(answer.status, 200) << answer.text;
    return answer.body["experiment"].value("id", int64_t{0});
  };
  const int64_t mine = created(alice);
  const int64_t admins = created(admin);
  const std::string path = "/api/v1/experiments/" + std::to_string(mine);
  const nlohmann::json described = Send("GET", path, bob).body;
  EXPECT_EQ(described["experiment"]["username"], "alice") << described.dump();
  // Determined's `det experiment list` asks for the caller's own (users=NAME).
  const nlohmann::json alices = Send("GET", "/api/v1/experiments?users=alice", bob).body;
  ASSERT_EQ(alices["experiments"].size(), 1u) << alices.dump();
  EXPECT_EQ(alices["experiments"][0]["id"], mine);
  EXPECT_EQ(
      Send("GET", "/api/v1/experiments?users=alice&users=admin", bob).body["pagination"]["total"],
      2);
  EXPECT_NE(Det("experiment list").find("alice"), std::string::npos) << Det("experiment list");
  EXPECT_EQ(Send("POST", path + "/kill", bob).status, 200) << "anyone may kill it";
  ASSERT_TRUE(testing::Eventually(
      [&] {
        return Send("GET", path, alice).body["experiment"].value("state", "") == "STATE_CANCELED";
      },
      std::chrono::seconds(10)));
  const testing::RestAnswer refused = Send("DELETE", path, bob);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.body.value("message", ""),
            "experiment " + std::to_string(mine) +
                " belongs to \"alice\": only its owner or an admin may delete it");
  EXPECT_EQ(Send("DELETE", path, alice).status, 200);
  // An admin may delete anyone's; a non-admin's CLI says why not.
  const std::string other = "/api/v1/experiments/" + std::to_string(admins);
  EXPECT_EQ(Send("POST", other + "/kill", admin).status, 200);
  ASSERT_TRUE(testing::Eventually(
      [&] {
        return Send("GET", other, admin).body["experiment"].value("state", "") == "STATE_CANCELED";
      },
      std::chrono::seconds(10)));
  const std::string cli =
      DetRc("bob", "bob-password-1", "experiment delete --yes " + std::to_string(admins));
  EXPECT_NE(cli.find("only its owner or an admin may delete it"), std::string::npos) << cli;
  EXPECT_NE(cli.find("rc=1"), std::string::npos) << cli;
  EXPECT_EQ(Send("DELETE", other, admin).status, 200);
}

// Every operation of the served OpenAPI document, as a non-admin and as an admin, its path
// naming another user's things: what the document marks for admins (x-det-access admin,
// admin-for-others, owner-or-admin) refuses the non-admin with 403 and not the admin; nothing
// else answers 403. A new route is walked as soon as it is documented (openapi_test checks that
// every route is).
TEST_F(UserRestTest, EveryOperationMarkedForAdminsRefusesOthersAndNoOtherDoes) {
  CreateUser("alice", kAlicePassword);
  const std::string alice = Login("alice", kAlicePassword);
  const std::string admin = Login("admin", testing::kAdminPassword);
  const std::string admin_id = std::to_string(
      Send("GET", "/api/v1/users/admin/by-username", admin).body["user"].value("id", 0));
  const testing::RestAnswer token =
      Send("POST", "/api/v1/tokens", admin, R"({"userId":)" + admin_id + R"(,"lifespan":"10m"})");
  ASSERT_EQ(token.status, 200) << token.text;
  const testing::RestAnswer experiment = Send(
      "POST", "/api/v1/experiments", admin,
      nlohmann::json{{"config",
                      {{"name", "admins"},
                       {"entrypoint", "true"},
                       {"searcher",
                        {{"name", "single"}, {"metric", "loss"}, {"max_length", {{"batches", 1}}}}},
                       {"checkpoint_storage",
                        {{"type", "shared_fs"}, {"host_path", (dir_ / "checkpoints").string()}}}}}}
          .dump());
  ASSERT_EQ(experiment.status, 200) << experiment.text;
  const std::map<std::string, std::string> others_things = {
      {"{username}", "admin"},
      {"{user_id}", admin_id},
      {"{workspace_id}", "1"},
      {"{project_id}", "1"},
      {"{token_id}", std::to_string(token.body["tokenId"].get<int64_t>())},
      {"{experiment_id}", std::to_string(experiment.body["experiment"]["id"].get<int64_t>())},
      {"{agent_id}", "no-such-agent"},
      {"{slot_id}", "0"},
      {"{trial_id}", "1"},
      {"{run_id}", "1"},
      {"{task_id}", "no-such-task"},
      {"{job_id}", "no-such-job"},
      {"{allocation_id}", "no-such-allocation"}};
  auto filled = [&](std::string path) {
    for (const auto& [name, value] : others_things) {
      for (size_t at; (at = path.find(name)) != std::string::npos;) {
        path.replace(at, name.size(), value);
      }
    }
    return path;
  };
  // The parts of a request that aim an operation at another user's things.
  const std::map<std::string, std::pair<std::string, std::string>> aimed = {
      {"GET /api/v1/tokens", {"?username=admin", ""}},
      {"POST /api/v1/tokens", {"", R"({"userId":)" + admin_id + R"(,"lifespan":"1m"})"}},
      {"PATCH /api/v1/tokens/{token_id}", {"", R"({"setRevoked":true})"}},
      {"POST /api/v1/users/{user_id}/password", {"", R"("taken-over-1")"}},
      {"PATCH /api/v1/users/{user_id}", {"", R"({"active":false})"}}};
  const nlohmann::json document = Send("GET", "/api/v1/openapi.json", "").body;
  ASSERT_TRUE(document.contains("paths")) << "no OpenAPI document";
  int walked = 0, for_admins = 0;
  for (const auto& [path, operations] : document["paths"].items()) {
    for (const auto& [method_lower, operation] : operations.items()) {
      std::string method = method_lower;
      for (char& c : method) c = static_cast<char>(std::toupper(c));
      const std::string name = method + " " + path;
      const std::string access = operation.value("x-det-access", "");
      ASSERT_FALSE(access.empty()) << name << " has no x-det-access";
      if (access == "public" || name == "POST /api/v1/auth/logout") continue;
      auto [query, body] = aimed.count(name) ? aimed.at(name) : std::pair{std::string(), "{}"};
      const testing::RestAnswer as_alice = Send(method, filled(path) + query, alice, body);
      ++walked;
      if (access == "allocation") {  // a person's token is not an allocation's
        EXPECT_TRUE(as_alice.status == 401 || as_alice.status == 403) << name << as_alice.text;
        continue;
      }
      if (access == "user") {
        EXPECT_NE(as_alice.status, 403) << name << " refuses a user: " << as_alice.text;
        continue;
      }
      ++for_admins;
      EXPECT_EQ(as_alice.status, 403)
          << name << " (" << access << ") let alice in: " << as_alice.text;
      const testing::RestAnswer as_admin = Send(method, filled(path), admin, "{}");
      EXPECT_NE(as_admin.status, 403) << name << " refuses the admin: " << as_admin.text;
      EXPECT_NE(as_admin.status, 401) << name << ": the admin's session ended: " << as_admin.text;
    }
  }
  EXPECT_GE(walked, 45);
  EXPECT_EQ(for_admins, 12) << "the admin operations of the document changed: update the CLI "
                               "walk (EveryAdminCommandIsRefusedToANonAdmin) too";
}

// The CLI's side: each command behind an admin operation of the REST document, run by a
// non-admin against another user's things, is refused naming why, exit code 1.
TEST_F(UserProcessTest, EveryAdminCommandIsRefusedToANonAdmin) {
  CreateUser("alice", kAlicePassword);
  const std::string token_id = [&] {
    const std::string listed = Det("--json token create --description admins --lifespan 1h");
    const nlohmann::json made = nlohmann::json::parse(listed, nullptr, false);
    EXPECT_TRUE(made.is_object()) << listed;
    return std::to_string(made.is_object() ? made.value("id", int64_t{0}) : 0);
  }();
  const std::string experiment_id = [&] {
    const std::filesystem::path config = dir_ / "admins.yaml";
    std::ofstream(config) << "name: admins\nentrypoint: 'true'\nsearcher: {name: single, "
                             "metric: loss, max_length: {batches: 1}}\ncheckpoint_storage: "
                             "{type: shared_fs, host_path: "
                          << (dir_ / "checkpoints").string() << "}\n";
    auto created =
        nlohmann::json::parse(Det("--json experiment create " + config.string()), nullptr, false);
    return std::to_string(created.is_object() ? created.value("id", int64_t{0}) : 0);
  }();
  // The commands, by the REST operation each stands for.
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"GET /api/v1/master/logs", "master logs"},
      {"POST /api/v1/users", "user create bob <<< 'bob-password-1'"},
      {"PATCH /api/v1/users/{user_id}", "user deactivate admin"},
      {"PATCH /api/v1/users/{user_id}", "user activate admin"},
      {"POST /api/v1/users/{user_id}/password", "user change-password admin <<< 'taken-over-1'"},
      {"POST /api/v1/tokens", "token create --user admin"},
      {"GET /api/v1/tokens", "token list --all"},
      {"PATCH /api/v1/tokens/{token_id}", "token revoke " + token_id},
      {"POST /api/v1/agents/{agent_id}/enable", "agent enable some-agent"},
      {"POST /api/v1/agents/{agent_id}/disable", "agent disable some-agent"},
      {"POST /api/v1/agents/{agent_id}/slots/{slot_id}/enable", "slot enable some-agent 0"},
      {"POST /api/v1/agents/{agent_id}/slots/{slot_id}/disable", "slot disable some-agent 0"},
      {"DELETE /api/v1/experiments/{experiment_id}", "experiment delete --yes " + experiment_id}};
  std::set<std::string> covered;
  for (const auto& [operation, command] : commands) {
    covered.insert(operation);
    const std::string& args = command;  // clang 14 captures no structured binding
    const std::string out = Shell("bash -c " + [&] {
      std::string quoted = "'";
      for (char c : DetCommand("DET_USER=alice DET_PASS=" + std::string(kAlicePassword) +
                                   " DET_AUTH_FILE=" + (dir_ / "auth-alice.json").string(),
                               args + "; echo rc=$?")) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      }
      return quoted + "'";
    }());
    EXPECT_TRUE(out.find("for admins only") != std::string::npos ||
                out.find("only an admin may") != std::string::npos ||
                out.find("only its owner or an admin") != std::string::npos)
        << "det " << args << ": " << out;
    EXPECT_NE(out.find("rc=1"), std::string::npos) << "det " << args << ": " << out;
  }
  EXPECT_EQ(covered.size(), 12u) << "one command per admin operation of the REST document";
  EXPECT_NE(DetRc("admin", testing::kAdminPassword, "user whoami").find("rc=0"), std::string::npos)
      << "the admin was left as it was";
}

}  // namespace
}  // namespace det
