// det with nothing of the cluster but its URL and a password (issue 53), against a master with
// CURVE on whose allow-list names only an agent: det finds the gateway and its key in the master's
// GET /info, makes its own key pair, and logs in. The gateway key first seen at the URL is kept; a
// master presenting another one there is refused, naming both, until `det master forget-key`. A
// master that admits only allow-listed keys (cli_keys: allow_list) refuses det's own key.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <sstream>

#include "bus/security.h"
#include "tests/testing/cluster_fixture.h"

namespace det::testing {
namespace {

class DetUrlLoginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("det-url-" + bus::RandomId());
    fs::create_directories(dir_ / "home");
    db_ = PostgresEnvironment::Get()->FreshDatabase();
    rest_port_ = PortBelowEphemeralRange();
    do gateway_port_ = PortBelowEphemeralRange();
    while (gateway_port_ == rest_port_);
    do agent_port_ = PortBelowEphemeralRange();
    while (agent_port_ == rest_port_ || agent_port_ == gateway_port_);
    const bus::CurveKeyPair agent = *bus::GenerateCurveKeyPair();
    std::ofstream(dir_ / "allowed") << agent.public_key << " agent\n";
  }
  void TearDown() override {
    master_.reset();
    fs::remove_all(dir_);
  }

  // A master with a new key pair (`name`), on the test's ports; its public key. `tls`: HTTPS with
  // a certificate of its own (made here); `plaintext`: its bus without CURVE.
  std::string StartMaster(const std::string& name, const std::string& cli_keys = "any",
                          bool tls = false, bool plaintext = false,
                          const std::string& more_security = "") {
    master_.reset();
    const bus::CurveKeyPair keys = *bus::GenerateCurveKeyPair();
    EXPECT_TRUE(bus::WriteKeyPairFiles(keys, (dir_ / name).string()).ok());
    const fs::path config = dir_ / (name + ".yaml");
    fs::remove(dir_ / "endpoints.yaml");
    std::ofstream(config) << "db:\n  host: " << db_.host << "\n  port: " << db_.port
                          << "\n  name: " << db_.name << "\n  user: " << db_.user
                          << "\n  password: " << db_.password << "\nport: " << rest_port_
                          << "\nbus:\n  host: 127.0.0.1\n  gateway_port: " << gateway_port_
                          << "\n  agent_port: " << agent_port_
                          << "\n  event_subscribe_port: 0\n  event_publish_port: 0\n"
                             "  snapshot_port: 0\n  security:\n    key_file: "
                          << (dir_ / (name + ".key")).string()
                          << "\n    allowed_clients_file: " << (dir_ / "allowed").string()
                          << "\n    cli_keys: " << cli_keys
                          << (plaintext ? "\n    plaintext: true" : "")
                          << "\nsecurity:\n  initial_user_password: " << kAdminPassword << "\n"
                          << more_security << (tls ? TlsSection() : std::string());
    master_ = std::make_unique<Process>(
        std::vector<std::string>{BuildDir() + "/master/det-master", "-c", config.string(),
                                 "--endpoints-file", (dir_ / "endpoints.yaml").string()},
        dir_ / (name + ".log"));
    for (int i = 0; i < 600 && !fs::exists(dir_ / "endpoints.yaml"); ++i) {
      std::this_thread::sleep_for(50ms);
    }
    EXPECT_TRUE(fs::exists(dir_ / "endpoints.yaml")) << "the master did not start";
    return keys.public_key;
  }

  std::string TlsSection() const {
    Shell(
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
        "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
        (dir_ / "tls.key").string() + " -out " + (dir_ / "tls.crt").string() + " 2>&1");
    return "  tls:\n    cert: " + (dir_ / "tls.crt").string() +
           "\n    key: " + (dir_ / "tls.key").string() + "\n";
  }

  std::string Url() const { return scheme_ + "://127.0.0.1:" + std::to_string(rest_port_); }

  // det with only the URL (and `login`: DET_USER=admin and its password; `more_env`: VAR=value
  // ...); "rc=N" last.
  std::string Det(const std::string& args, bool login = true, const std::string& more_env = "") {
    const std::string env =
        more_env + " HOME=" + (dir_ / home_).string() +
        " DET_MASTER=" + (master_url_.empty() ? Url() : master_url_) +
        (login ? std::string(" DET_USER=admin DET_PASS=") + kAdminPassword : std::string());
    return Shell(
        "{ env -u DET_KEY_FILE -u DET_MASTER_KEY_FILE -u DET_USER_TOKEN -u XDG_CONFIG_HOME "
        "-u DET_AUTH_FILE -u DET_KNOWN_MASTERS_FILE -u DET_CLIENT_KEY_FILE -u DET_PLAINTEXT "
        "-u DET_MASTER_CERT_FILE DET_RELAY=0 " +
        env + " timeout 60 " + BuildDir() + "/cli/det " + args + "; echo rc=$?; } 2>&1");
  }
  static bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }
  fs::path ConfigFile(const std::string& name) const {
    return dir_ / home_ / ".config" / "det" / name;
  }
  nlohmann::json Known() const {
    return nlohmann::json::parse(std::ifstream(ConfigFile("known_masters.json")), nullptr, false);
  }

  fs::path dir_;
  std::string scheme_ = "http";
  std::string home_ = "home";  // the HOME det runs with, under dir_
  std::string master_url_;     // DET_MASTER when not Url()
  storage::DbConfig db_;
  int rest_port_ = 0, gateway_port_ = 0, agent_port_ = 0;
  std::unique_ptr<Process> master_;
};

TEST_F(DetUrlLoginTest, TheUrlAndAPasswordAreEnoughAndTheKeyFirstSeenIsKept) {
  const std::string first_key = StartMaster("master-1");

  // Before a login only the master's info answers; the key is trusted and kept at first use.
  const std::string info = Det("master info", /*login=*/false);
  EXPECT_TRUE(Has(info, "rc=0")) << info;
  EXPECT_TRUE(Has(info, "trusted from now on")) << info;
  EXPECT_TRUE(Has(info, first_key)) << info;
  const std::string anonymous = Det("experiment list", /*login=*/false);
  EXPECT_FALSE(Has(anonymous, "rc=0")) << anonymous;
  EXPECT_TRUE(Has(anonymous, "det user login")) << anonymous;

  const std::string listed = Det("experiment list");
  EXPECT_TRUE(Has(listed, "rc=0")) << listed;
  EXPECT_FALSE(Has(listed, "trusted from now on")) << "asked once: " << listed;
  nlohmann::json known = Known();
  EXPECT_EQ(known[Url()].value("key", ""), first_key) << known.dump();
  // Determined's bare form of the same address is the same master: its key and session.
  master_url_ = "127.0.0.1:" + std::to_string(rest_port_);
  const std::string bare = Det("experiment list", /*login=*/false);
  EXPECT_TRUE(Has(bare, "rc=0")) << bare;
  EXPECT_FALSE(Has(bare, "trusted from now on")) << bare;
  master_url_ = "127.0.0.1:80x";
  const std::string malformed = Det("experiment list", /*login=*/false);
  EXPECT_TRUE(Has(malformed, "127.0.0.1:80x") && Has(malformed, "bad port")) << malformed;
  master_url_.clear();
  const std::string gateway = known[Url()].value("gateway", "");
  EXPECT_EQ(gateway, "tcp://127.0.0.1:" + std::to_string(gateway_port_));
  struct stat st {};
  ASSERT_EQ(::stat(ConfigFile("client.key").c_str(), &st), 0) << "det made its own key pair";
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Later calls ask no /info: what is kept is enough (here for a URL nothing answers at).
  known["http://127.0.0.1:1"] = known[Url()];
  // A gateway that moved is found again through /info (here the kept one is a port nothing
  // answers at: after its attempts, det asks /info and sends the request there).
  known[Url()]["gateway"] = "tcp://127.0.0.1:" + std::to_string(PortBelowEphemeralRange());
  std::ofstream(ConfigFile("known_masters.json")) << known.dump();
  const std::string kept_only = Det("-m http://127.0.0.1:1 experiment list");
  EXPECT_TRUE(Has(kept_only, "rc=0")) << kept_only;
  const std::string moved = Det("experiment list");
  EXPECT_TRUE(Has(moved, "rc=0")) << moved;
  EXPECT_EQ(Known()[Url()].value("gateway", ""), gateway) << "kept where it is now";

  // Another master (new keys) at the same address: refused, naming both keys, until forgotten.
  const std::string second_key = StartMaster("master-2");
  const std::string refused = Det("experiment list");
  EXPECT_FALSE(Has(refused, "rc=0")) << refused;
  EXPECT_TRUE(Has(refused, first_key) && Has(refused, second_key)) << refused;
  EXPECT_TRUE(Has(refused, "det master forget-key")) << refused;
  EXPECT_TRUE(Has(Det("master forget-key", /*login=*/false), "rc=0"));
  const std::string again = Det("experiment list");
  EXPECT_TRUE(Has(again, "rc=0")) << again;
  EXPECT_TRUE(Has(again, second_key)) << again;

  // A master at that address whose gateway runs in plaintext: never talked to unencrypted
  // unless asked (--plaintext), and here refused, naming the key kept.
  StartMaster("plain", "any", /*tls=*/false, /*plaintext=*/true);
  const std::string downgraded = Det("experiment list");
  EXPECT_FALSE(Has(downgraded, "rc=0")) << downgraded;
  EXPECT_TRUE(Has(downgraded, "plaintext") && Has(downgraded, second_key)) << downgraded;
}

// Over https the certificate vouches for the key: det asks for a way to trust it, and keeps no
// first-use key to check.
TEST_F(DetUrlLoginTest, OverHttpsTheCertificateVouchesForTheKey) {
  scheme_ = "https";
  StartMaster("tls-master", "any", /*tls=*/true);
  const std::string untrusted = Det("experiment list");
  EXPECT_FALSE(Has(untrusted, "rc=0")) << untrusted;
  EXPECT_TRUE(Has(untrusted, "DET_MASTER_CERT_FILE")) << untrusted;
  const std::string trusted =
      Det("experiment list", true, "DET_MASTER_CERT_FILE=" + (dir_ / "tls.crt").string());
  EXPECT_TRUE(Has(trusted, "rc=0")) << trusted;
  EXPECT_FALSE(Has(trusted, "trusted from now on")) << trusted;
  // noverify checks no certificate, so it vouches for nothing: the key is kept at first use.
  fs::remove_all(dir_ / "home");
  const std::string unchecked = Det("experiment list", true, "DET_MASTER_CERT_FILE=noverify");
  EXPECT_TRUE(Has(unchecked, "rc=0")) << unchecked;
  EXPECT_TRUE(Has(unchecked, "trusted from now on")) << unchecked;
}

// security.session_lifespan: a login made with det lasts as long as the master was told.
TEST_F(DetUrlLoginTest, ALoginLastsAsConfigured) {
  StartMaster("short-sessions", "any", false, false, "  session_lifespan: 2h\n");
  ASSERT_TRUE(Has(Det("experiment list"), "rc=0"));
  pqxx::connection db(db_.ConnectionString());
  pqxx::work tx(db);
  const double seconds = tx.exec1(
                               "SELECT EXTRACT(EPOCH FROM max(expires_at - created_at)) "
                               "FROM user_sessions")[0]
                             .as<double>();
  EXPECT_NEAR(seconds, 2 * 3600, 60) << "a week is the default; this master says two hours";
}

// A session from `det user login` is bound to the client key it was made on: the token copied to
// another client (its own key) or to REST is refused. An access token is made to be handed on.
TEST_F(DetUrlLoginTest, ASessionTokenWorksOnlyFromTheClientItWasMadeOn) {
  StartMaster("bound");
  ASSERT_TRUE(Has(Det("user login admin"), "rc=0"));
  std::stringstream cached;
  cached << std::ifstream(ConfigFile("auth.json")).rdbuf();
  const size_t from = cached.str().find("dets_");
  ASSERT_NE(from, std::string::npos) << cached.str();
  const std::string session = cached.str().substr(from, cached.str().find('"', from) - from);
  ASSERT_EQ(session.rfind("dets_", 0), 0u) << "the cached session: " << session;
  const std::string made_token = Det("token create");
  const size_t at = made_token.find("deta_");
  ASSERT_NE(at, std::string::npos) << made_token;
  const std::string access_token = made_token.substr(at, made_token.find_first_of(" \n", at) - at);

  EXPECT_TRUE(Has(Det("experiment list", false, "DET_USER_TOKEN=" + session), "rc=0"))
      << "on the client that logged in";
  home_ = "another-home";  // another client: a key pair of its own
  const std::string replayed = Det("experiment list", false, "DET_USER_TOKEN=" + session);
  EXPECT_FALSE(Has(replayed, "rc=0")) << replayed;
  EXPECT_TRUE(Has(replayed, "belongs to another det client")) << replayed;
  const std::string handed_on = Det("experiment list", false, "DET_USER_TOKEN=" + access_token);
  EXPECT_TRUE(Has(handed_on, "rc=0")) << handed_on;

  const std::string rest = Shell("curl -s -w ' http=%{http_code}' -H 'Authorization: Bearer " +
                                 session + "' " + Url() + "/api/v1/me");
  EXPECT_TRUE(Has(rest, "http=401") && Has(rest, "not taken over REST")) << rest;
  const std::string rest_access =
      Shell("curl -s -w ' http=%{http_code}' -H 'Authorization: Bearer " + access_token + "' " +
            Url() + "/api/v1/me");
  EXPECT_TRUE(Has(rest_access, "http=200")) << rest_access;
}

// A key is kept once the gateway has answered with it: a /info whose key no gateway holds (here a
// plain web server's, naming the real gateway's port) leaves nothing behind to refuse the real
// master later.
TEST_F(DetUrlLoginTest, AKeyNoGatewayAnswersWithIsNotKept) {
  StartMaster("real");
  const int port = PortBelowEphemeralRange();
  fs::create_directories(dir_ / "www");
  std::ofstream(dir_ / "www" / "info")
      << nlohmann::json{{"gateway_port", gateway_port_},
                        {"gateway_public_key", bus::GenerateCurveKeyPair()->public_key}}
             .dump();
  Process web({"/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory",
               (dir_ / "www").string(), std::to_string(port)},
              dir_ / "www.log");
  master_url_ = "http://127.0.0.1:" + std::to_string(port);
  for (int i = 0; i < 100 && !Has(Shell("curl -s " + master_url_ + "/info"), "gateway_port"); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  const std::string refused = Det("experiment list");
  EXPECT_FALSE(Has(refused, "rc=0")) << refused;
  EXPECT_FALSE(Has(refused, "trusted from now on")) << refused;
  EXPECT_TRUE(Has(refused, "does not hold the key")) << refused;
  EXPECT_FALSE(Known().contains(master_url_)) << Known().dump();
}

TEST_F(DetUrlLoginTest, AMasterThatAdmitsOnlyAllowListedKeysRefusesDetsOwn) {
  StartMaster("listed", "allow_list");
  const std::string refused = Det("experiment list");
  EXPECT_FALSE(Has(refused, "rc=0")) << refused;
  EXPECT_TRUE(Has(refused, "does not know this client key")) << refused;
}

}  // namespace
}  // namespace det::testing
