#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "storage/db_config.h"

namespace det::storage {

struct LocalPostgresOptions {
  std::string data_dir;          // everything lives here: pgdata/, password, port, postgres.log
  int port = 0;                  // 0: a free port, remembered in data_dir/port for the next start
  std::string database = "det";  // created if missing
  std::string user = "det";      // the cluster's superuser
  std::string listen_address = "127.0.0.1";  // the one address it listens on
  std::string client_network;  // e.g. "10.99.0.0/24": clients there may log in too ("": local)
  // Extra server settings ("name=value", each passed as -c) for a server this starts; none by
  // default (the test suite's shared server turns fsync off: it is thrown away after the run).
  std::vector<std::string> server_settings;
};

// A private PostgreSQL server run from the system's binaries (`initdb`, `pg_ctl` under
// /usr/lib/postgresql/<version>/bin) in a data folder of its own, listening on 127.0.0.1 only (by
// default), with a generated password (scram-sha-256). Re-running on the same folder reuses the
// cluster, its password and its port. When this process is root the server runs as the unprivileged
// `postgres` user; when that user cannot reach data_dir (a folder under a 0700 home, as /root is),
// the server's own files (pgdata/, run/, postgres.log) live in a folder of its own,
// kServerRoot/<hash of data_dir>, which data_dir/server_dir names; data_dir keeps the password and
// port, readable by root only. `listen_address` and `client_network`
// serve it to other hosts (the multi-host tests' database host).
//
// Start() returns once the server accepts connections and the database exists. Stop() (also run
// by the destructor) shuts it down cleanly (pg_ctl -m fast).
class LocalPostgres {
 public:
  static Result<std::unique_ptr<LocalPostgres>> Start(LocalPostgresOptions options);
  ~LocalPostgres();

  // How to connect.
  const DbConfig& db() const { return db_; }
  Status Stop();
  // Whether a server runs on data_dir now (started by any handle, any process). Starts nothing.
  static Result<bool> RunningIn(const std::string& data_dir);
  // Stops the server running on data_dir, if one does, whoever started it (a test suite's shared
  // server, stopped by the suite's last step); starts nothing. `immediate`: at once, without a
  // shutdown checkpoint (for a server whose data is removed next).
  static Status StopServerIn(const std::string& data_dir, bool immediate);
  // The last `bytes` of data_dir's server log (postgres.log): why a server stopped or did not
  // start.
  static std::string LogTail(const std::string& data_dir, size_t bytes = 2000);
  // Stops, waits `downtime`, and starts again on the same port (tests: a database restart).
  Status Restart(std::chrono::milliseconds downtime = std::chrono::milliseconds(0));
  // Whether Stop() will stop the server: false when Start() found one already running.
  bool owns_server() const { return running_; }
  // Where the server's files live: data_dir, or the folder data_dir/server_dir names.
  const std::string& server_dir() const { return server_dir_; }

  // The folder for data_dir's (an absolute path) server files: data_dir, or one made elsewhere
  // (and recorded in data_dir/server_dir) when the postgres user cannot reach data_dir.
  static Result<std::string> ServerDirFor(const std::string& data_dir);

  // Where servers whose data_dir the postgres user cannot reach keep their files.
  static constexpr const char* kServerRoot = "/var/lib/det/local-postgres";

 private:
  LocalPostgres(LocalPostgresOptions options, std::string bin_dir);
  Status Initialize();
  Status StartServer();
  Status StopServer(const std::string& mode);  // pg_ctl's -m: fast or immediate
  Status EnsureDatabase();
  Status AdmitClientNetwork();  // the pg_hba.conf line for client_network

  LocalPostgresOptions options_;
  std::string bin_dir_;
  std::string server_dir_;
  DbConfig db_;
  bool running_ = false;
};

// The newest /usr/lib/postgresql/<version>/bin that has initdb and pg_ctl.
Result<std::string> FindPostgresBinaries();

}  // namespace det::storage
