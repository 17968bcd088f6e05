#include "storage/local_postgres.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "storage/database.h"
#include "tests/testing/postgres_fixture.h"

namespace det::storage {
namespace {

using det::testing::PostgresEnvironment;

int64_t Count(const DbConfig& db, const std::string& table) {
  auto connection = Connect(db);
  pqxx::nontransaction tx(**connection);
  return tx.exec1("SELECT count(*) FROM " + tx.quote_name(table))[0].as<int64_t>();
}

TEST(LocalPostgresTest, ListensOnLoopbackWithTheGeneratedPassword) {
  const DbConfig& db = PostgresEnvironment::Get()->server().db();
  EXPECT_EQ(db.host, "127.0.0.1");
  EXPECT_EQ(db.password.size(), 32u);
  auto connection = Connect(db);
  ASSERT_TRUE(connection.ok()) << connection.status().ToString();
  pqxx::nontransaction tx(**connection);
  EXPECT_EQ(tx.exec1("SHOW listen_addresses")[0].as<std::string>(), "127.0.0.1");
}

TEST(LocalPostgresTest, WrongPasswordIsRefusedAndTheErrorNamesTheTarget) {
  DbConfig db = PostgresEnvironment::Get()->server().db();
  db.password = "wrong";
  auto connection = Connect(db);
  ASSERT_FALSE(connection.ok());
  const std::string& m = connection.status().message();
  EXPECT_NE(m.find("127.0.0.1:" + std::to_string(db.port)), std::string::npos) << m;
  EXPECT_NE(m.find("database \"det\""), std::string::npos) << m;
  EXPECT_NE(m.find("user \"det\""), std::string::npos) << m;
  EXPECT_NE(m.find("password authentication failed"), std::string::npos) << m;
}

TEST(LocalPostgresTest, RestartKeepsDataPasswordAndPort) {
  auto& env = *PostgresEnvironment::Get();
  DbConfig db = env.FreshDatabase();
  {
    auto connection = Connect(db);
    pqxx::work tx(**connection);
    tx.exec0("CREATE TABLE kept (x int)");
    tx.exec0("INSERT INTO kept VALUES (1), (2)");
    tx.commit();
  }
  const DbConfig before = env.server().db();
  ASSERT_TRUE(env.server().Restart().ok());
  EXPECT_EQ(env.server().db().port, before.port);
  EXPECT_EQ(Count(db, "kept"), 2);
}

TEST(LocalPostgresTest, SecondStartOnTheSameFolderReusesTheRunningCluster) {
  auto& env = *PostgresEnvironment::Get();
  auto again = LocalPostgres::Start({env.dir().string()});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->db().port, env.server().db().port);
  EXPECT_EQ((*again)->db().password, env.server().db().password);
  EXPECT_FALSE((*again)->owns_server());
  again->reset();  // releasing the second handle leaves the server running
  EXPECT_TRUE(Connect(env.server().db()).ok());
}

// Regression: as root with HOME=/root (mode 0700), `det deploy local up` failed: initdb, run as
// `postgres`, could not reach the cluster folder.
TEST(LocalPostgresTest, AsRootAFolderThePostgresUserCannotReachStillGetsAServer) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (the server then runs as postgres)";
  const std::filesystem::path home =
      std::filesystem::temp_directory_path() / ("det-home-" + std::to_string(::getpid()));
  std::filesystem::create_directories(home);
  std::filesystem::permissions(home, std::filesystem::perms::owner_all);
  const std::string data_dir = (home / ".local/share/det/local/postgres").string();
  std::string server_dir;
  {
    auto pg = LocalPostgres::Start({data_dir});
    ASSERT_TRUE(pg.ok()) << pg.status().ToString();
    server_dir = (*pg)->server_dir();
    EXPECT_TRUE(server_dir.starts_with(LocalPostgres::kServerRoot)) << server_dir;
    auto connection = Connect((*pg)->db());
    ASSERT_TRUE(connection.ok()) << connection.status().ToString();
    pqxx::work tx(**connection);
    tx.exec0("CREATE TABLE kept (x int)");
    tx.exec0("INSERT INTO kept VALUES (1)");
    tx.commit();
  }
  // A second start of the same folder finds the same server files and data.
  auto again = LocalPostgres::Start({data_dir});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->server_dir(), server_dir);
  EXPECT_EQ(Count((*again)->db(), "kept"), 1);
  ASSERT_TRUE((*again)->Stop().ok());
  std::filesystem::remove_all(server_dir);
  std::filesystem::remove_all(home);
}

TEST(DbConfigTest, ValuesAreQuotedSoTheyCannotAddKeywords) {
  DbConfig db;
  db.password = "x' host='evil";
  EXPECT_NE(db.ConnectionString().find("password='x\\' host=\\'evil'"), std::string::npos)
      << db.ConnectionString();
}

TEST(DbConfigTest, MissingFieldsAreNamed) {
  ConfigReader reader(YAML::Load("db: {host: '', name: '', port: 0}"));
  DbConfig db;
  db.Read(reader.Child("db"));
  Status status = reader.Finish();
  EXPECT_NE(status.message().find("db.host: must not be empty"), std::string::npos);
  EXPECT_NE(status.message().find("db.name: must not be empty"), std::string::npos);
  EXPECT_NE(status.message().find("db.port: must be a real port"), std::string::npos);
}

}  // namespace
}  // namespace det::storage
