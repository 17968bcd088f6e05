#pragma once

#include <string>

#include "common/config.h"

namespace det::storage {

// `db:` in master.yaml, with Determined's field names. With no `db:` section the master runs its
// own private PostgreSQL (storage/local_postgres.h) and fills these in itself.
struct DbConfig {
  std::string host = "127.0.0.1";
  int port = 5432;
  std::string name = "determined";
  std::string user = "postgres";
  std::string password;
  std::string ssl_mode = "disable";  // disable|allow|prefer|require|verify-ca|verify-full
  std::string ssl_root_cert;

  // Reads the fields under `db`; host, name and user may not be empty.
  void Read(ConfigReader& reader);
  // A libpq connection string with every value quoted, so no value can inject a keyword.
  std::string ConnectionString() const;
  // "postgres://user@host:port/name" for messages (never the password).
  std::string Describe() const;
};

inline constexpr const char* kSslModes[] = {"disable", "allow",     "prefer",
                                            "require", "verify-ca", "verify-full"};

}  // namespace det::storage
