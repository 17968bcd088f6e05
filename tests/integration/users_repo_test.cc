#include "storage/users_repo.h"

#include <gtest/gtest.h>

#include "tests/testing/postgres_fixture.h"

namespace det::storage {
namespace {

using det::testing::InTransaction;
using det::testing::PostgresEnvironment;

constexpr int64_t kNow = 1'800'000'000'000'000'000;  // 2027-01-15, in Unix nanoseconds
constexpr int64_t kHour = 3'600'000'000'000;

class UsersRepoTest : public ::testing::Test {
 protected:
  DbConfig db_ = PostgresEnvironment::Get()->MigratedDatabase();

  int64_t NewUser(const std::string& name, bool admin = false) {
    return InTransaction(db_, [&](pqxx::work& tx) { return *CreateUser(tx, name, "h", admin); });
  }
};

TEST_F(UsersRepoTest, CreatedUsersAreFoundByNameAndIdAndListedByName) {
  const int64_t bob = NewUser("bob");
  const int64_t alice = NewUser("alice", /*admin=*/true);
  InTransaction(db_, [&](pqxx::work& tx) {
    auto found = FindUserByName(tx, "alice");
    ASSERT_TRUE(found.ok()) << found.status().ToString();
    EXPECT_EQ(found->id, alice);
    EXPECT_TRUE(found->admin);
    EXPECT_TRUE(found->active);
    EXPECT_GT(found->created_at_ns, 0);
    EXPECT_EQ(FindUserById(tx, bob)->username, "bob");
    auto users = ListUsers(tx);
    ASSERT_EQ(users.size(), 2u);
    EXPECT_EQ(users[0].username, "alice");
    EXPECT_EQ(FindUserByName(tx, "carol").status().code(), StatusCode::kNotFound);
  });
}

TEST_F(UsersRepoTest, TakenNameIsAlreadyExistsAndHostileNamesAreStoredVerbatim) {
  NewUser("bob");
  const std::string hostile = "x'); DROP TABLE users; --";
  InTransaction(db_, [&](pqxx::work& tx) {
    auto again = CreateUser(tx, "bob", "h2", false);
    EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
    EXPECT_NE(again.status().message().find("bob"), std::string::npos);
    ASSERT_TRUE(CreateUser(tx, hostile, "h", false).ok());
    EXPECT_EQ(FindUserByName(tx, hostile)->username, hostile);
  });
}

TEST_F(UsersRepoTest, PasswordActiveAndAdminChangesAreStored) {
  const int64_t bob = NewUser("bob");
  InTransaction(db_, [&](pqxx::work& tx) {
    ASSERT_TRUE(SetPasswordHash(tx, bob, "new-hash").ok());
    ASSERT_TRUE(SetUserAdmin(tx, bob, true).ok());
    ASSERT_TRUE(SetUserActive(tx, bob, false).ok());
    auto user = FindUserById(tx, bob);
    EXPECT_EQ(user->password_hash, "new-hash");
    EXPECT_TRUE(user->admin);
    EXPECT_FALSE(user->active);
    EXPECT_EQ(SetUserActive(tx, 9999, true).code(), StatusCode::kNotFound);
  });
}

TEST_F(UsersRepoTest, SessionLivesUntilItExpiresOrIsDeleted) {
  const int64_t bob = NewUser("bob");
  InTransaction(db_, [&](pqxx::work& tx) {
    ASSERT_TRUE(CreateSession(tx, bob, "s1", kNow + kHour).ok());
    ASSERT_TRUE(CreateSession(tx, bob, "s2", kNow + kHour).ok());
    EXPECT_EQ(FindSession(tx, "s1", kNow)->user.id, bob);
    EXPECT_EQ(FindSession(tx, "s1", kNow)->client_key, "") << "a session bound to no key";
    EXPECT_EQ(FindSession(tx, "s1", kNow + 2 * kHour).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(FindSession(tx, "nope", kNow).status().code(), StatusCode::kNotFound);
    ASSERT_TRUE(DeleteSession(tx, "s2").ok());
    EXPECT_FALSE(FindSession(tx, "s2", kNow).ok());
    EXPECT_EQ(DeleteExpiredSessions(tx, kNow + 2 * kHour), 1);
  });
}

TEST_F(UsersRepoTest, ASessionKeepsTheClientKeyItWasIssuedTo) {
  const int64_t bob = NewUser("bob");
  InTransaction(db_, [&](pqxx::work& tx) {
    ASSERT_TRUE(CreateSession(tx, bob, "bound", kNow + kHour, "client-key-z85").ok());
    EXPECT_EQ(FindSession(tx, "bound", kNow)->client_key, "client-key-z85");
  });
}

TEST_F(UsersRepoTest, DeactivatedUserLosesSessionsAndTokens) {
  const int64_t bob = NewUser("bob");
  InTransaction(db_, [&](pqxx::work& tx) {
    ASSERT_TRUE(CreateSession(tx, bob, "s", kNow + kHour).ok());
    ASSERT_TRUE(CreateAccessToken(tx, bob, "t", "ci", std::nullopt).ok());
    ASSERT_TRUE(SetUserActive(tx, bob, false).ok());
    EXPECT_FALSE(FindSession(tx, "s", kNow).ok());
    EXPECT_FALSE(FindAccessTokenUser(tx, "t", kNow).ok());
  });
}

TEST_F(UsersRepoTest, AccessTokenWorksUntilRevokedOrExpired) {
  const int64_t bob = NewUser("bob");
  InTransaction(db_, [&](pqxx::work& tx) {
    auto forever = CreateAccessToken(tx, bob, "forever", "ci", std::nullopt);
    auto brief = CreateAccessToken(tx, bob, "brief", "laptop", kNow + kHour);
    ASSERT_TRUE(forever.ok() && brief.ok());
    EXPECT_EQ(FindAccessTokenUser(tx, "forever", kNow + 1000 * kHour)->id, bob);
    EXPECT_TRUE(FindAccessTokenUser(tx, "brief", kNow).ok());
    EXPECT_FALSE(FindAccessTokenUser(tx, "brief", kNow + 2 * kHour).ok());

    ASSERT_TRUE(RevokeAccessToken(tx, *forever, kNow).ok());
    EXPECT_FALSE(FindAccessTokenUser(tx, "forever", kNow).ok());
    EXPECT_EQ(RevokeAccessToken(tx, *forever, kNow).code(), StatusCode::kNotFound);

    auto tokens = ListAccessTokens(tx, bob);
    ASSERT_EQ(tokens.size(), 2u);
    EXPECT_EQ(tokens[0].description, "ci");
    EXPECT_EQ(tokens[0].revoked_at_ns, kNow);
    EXPECT_EQ(tokens[1].expires_at_ns, kNow + kHour);
    EXPECT_FALSE(tokens[1].revoked_at_ns.has_value());
  });
}

}  // namespace
}  // namespace det::storage
