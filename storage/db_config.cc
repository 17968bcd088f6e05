#include "storage/db_config.h"

namespace det::storage {
namespace {

// libpq keyword=value quoting: single quotes, with ' and \ escaped by a backslash.
std::string Quoted(const std::string& value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

void DbConfig::Read(ConfigReader& reader) {
  reader.Read("host", &host);
  reader.ReadPort("port", &port);
  reader.Read("name", &name);
  reader.Read("user", &user);
  reader.Read("password", &password);
  reader.ReadOneOf("ssl_mode", &ssl_mode, kSslModes);
  reader.Read("ssl_root_cert", &ssl_root_cert);
  if (host.empty()) reader.Fail("host", "must not be empty");
  if (name.empty()) reader.Fail("name", "must not be empty");
  if (user.empty()) reader.Fail("user", "must not be empty");
  if (port == 0) reader.Fail("port", "must be a real port (1..65535)");
}

std::string DbConfig::ConnectionString() const {
  std::string out = "host=" + Quoted(host) + " port=" + std::to_string(port) +
                    " dbname=" + Quoted(name) + " user=" + Quoted(user) +
                    " sslmode=" + Quoted(ssl_mode) + " connect_timeout=10";
  if (!password.empty()) out += " password=" + Quoted(password);
  if (!ssl_root_cert.empty()) out += " sslrootcert=" + Quoted(ssl_root_cert);
  return out;
}

std::string DbConfig::Describe() const {
  return "postgres://" + user + "@" + host + ":" + std::to_string(port) + "/" + name;
}

}  // namespace det::storage
