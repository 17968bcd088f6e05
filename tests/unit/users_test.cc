// auth::Users' rules over users in memory (tests/testing/in_memory_user_records.h): the last
// active admin stays, tokens and sessions end at once when revoked or reset (the 10 s cache is
// emptied), a user manages only their own tokens, and the cache spares the records.
#include "master/auth/users.h"

#include <gtest/gtest.h>

#include "tests/testing/in_memory_user_records.h"

namespace det::master::auth {
namespace {

class UsersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(users_.Bootstrap("admin-password").ok());
    auto alice = users_.Create(admin_, {.username = "alice", .password = "alice-password"});
    ASSERT_TRUE(alice.ok()) << alice.status().ToString();
    alice_ = {alice->user.id, "alice", false};
  }
  std::string Login(const std::string& username, const std::string& password) {
    auto login = users_.Login({username, password});
    EXPECT_TRUE(login.ok()) << login.status().ToString();
    return login.ok() ? login->token : "";
  }
  // A new access token of `owner`'s: the token and its id.
  std::pair<std::string, int64_t> Token(const Principal& owner) {
    auto token = users_.CreateToken(owner, {.username = owner.username});
    EXPECT_TRUE(token.ok()) << token.status().ToString();
    return token.ok() ? std::pair(token->token, token->summary.id) : std::pair("", int64_t{0});
  }

  SimulatedClock clock_;
  testing::InMemoryUserRecords records_;
  Users users_{records_, clock_, {.password_iterations = 1000}};
  const Principal admin_{1, "admin", true};
  Principal alice_;
};

TEST_F(UsersTest, TheLastActiveAdminCanBeNeitherDeactivatedNorDemoted) {
  for (bus::UserUpdateRequest change :
       {bus::UserUpdateRequest{.username = "admin", .active = false},
        bus::UserUpdateRequest{.username = "admin", .admin = false}}) {
    auto refused = users_.Update(admin_, change);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("last active admin"), std::string::npos);
  }
  ASSERT_TRUE(users_.Update(admin_, {.username = "alice", .admin = true}).ok());
  EXPECT_TRUE(users_.Update(admin_, {.username = "admin", .admin = false}).ok())
      << "another admin remains";
  EXPECT_FALSE(users_.Update(alice_, {.username = "alice", .active = false}).ok())
      << "alice's principal is not an admin's";
}

TEST_F(UsersTest, ARevokedTokenIsRefusedAtOnceThoughItWasCached) {
  const auto [token, id] = Token(alice_);
  ASSERT_TRUE(users_.Authenticate(token).ok());
  const int calls = records_.calls();
  ASSERT_TRUE(users_.Authenticate(token).ok());
  EXPECT_EQ(records_.calls(), calls) << "answered from the cache";
  ASSERT_TRUE(users_.PatchToken(alice_, {.id = id, .revoke = true}).ok());
  auto after = users_.Authenticate(token);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), StatusCode::kUnauthenticated);
}

TEST_F(UsersTest, AUserManagesOnlyTheirOwnTokensAndAnAdminEveryones) {
  const int64_t admins = Token(admin_).second;
  auto refused = users_.PatchToken(alice_, {.id = admins, .revoke = true});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(users_.CreateToken(alice_, {.username = "admin"}).ok());
  EXPECT_FALSE(users_.ListTokens(alice_, {.all = true}).ok());
  const int64_t alices = Token(alice_).second;
  auto revoked = users_.PatchToken(admin_, {.id = alices, .revoke = true});
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_GT(revoked->token.revoked_at, 0);
  EXPECT_EQ(revoked->token.username, "alice");
}

TEST_F(UsersTest, AnAdminsResetEndsTheUsersSessionsAndOnesOwnChangeKeepsThem) {
  const std::string first = Login("alice", "alice-password");
  ASSERT_TRUE(users_.SetPassword(alice_, {.password = "alice-password-2"}).ok());
  EXPECT_TRUE(users_.Authenticate(first).ok()) << "one's own change keeps the session in use";
  ASSERT_TRUE(
      users_.SetPassword(admin_, {.username = "alice", .password = "alice-password-3"}).ok());
  EXPECT_FALSE(users_.Authenticate(first).ok()) << "an admin's reset ends it";
  EXPECT_FALSE(users_.Login({"alice", "alice-password-2"}).ok());
  EXPECT_FALSE(Login("alice", "alice-password-3").empty());
}

// A session `det user login` made on the gateway is bound to the client key it was made for: the
// token copied to another client, or to REST, is refused, also when the first use cached it.
TEST_F(UsersTest, ASessionBoundToAClientKeyWorksOnlyFromThatKey) {
  auto login = users_.Login({"alice", "alice-password"}, "alices-key");
  ASSERT_TRUE(login.ok()) << login.status().ToString();
  const std::string& token = login->token;
  ASSERT_TRUE(users_.Authenticate(token, "alices-key").ok());
  auto replayed = users_.Authenticate(token, "mallorys-key");
  ASSERT_FALSE(replayed.ok());
  EXPECT_EQ(replayed.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(replayed.status().message().find("belongs to another det client"), std::string::npos)
      << replayed.status().message();
  auto over_rest = users_.Authenticate(token, "");
  ASSERT_FALSE(over_rest.ok());
  EXPECT_NE(over_rest.status().message().find("not taken over REST"), std::string::npos)
      << over_rest.status().message();
  Users restarted(records_, clock_, {.password_iterations = 1000});  // nothing cached
  EXPECT_FALSE(restarted.Authenticate(token, "mallorys-key").ok()) << "read from the records";
  EXPECT_TRUE(restarted.Authenticate(token, "alices-key").ok());
}

TEST_F(UsersTest, ARestLoginAndAnAccessTokenAreBoundToNoClient) {
  const std::string rest_session = Login("alice", "alice-password");
  const std::string access_token = Token(alice_).first;
  for (const std::string& token : {rest_session, access_token}) {
    for (const char* key : {"", "any-key", "another-key"}) {
      EXPECT_TRUE(users_.Authenticate(token, key).ok()) << token.substr(0, 5) << " from " << key;
    }
  }
}

TEST_F(UsersTest, ALoginOfADeactivatedUserOrAWrongPasswordSaysTheSame) {
  ASSERT_TRUE(users_.Update(admin_, {.username = "alice", .active = false}).ok());
  auto inactive = users_.Login({"alice", "alice-password"});
  auto wrong = users_.Login({"admin", "not-the-password"});
  auto unknown = users_.Login({"nobody", "whatever-password"});
  for (const auto* login : {&inactive, &wrong, &unknown}) {
    ASSERT_FALSE(login->ok());
    EXPECT_EQ(login->status().message(), "invalid username or password");
  }
}

}  // namespace
}  // namespace det::master::auth
