#include "storage/local_postgres.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "common/process.h"
#include "storage/database.h"

namespace det::storage {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) return Internal("cannot write " + path.string());
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  return Status::Ok();
}

std::string RandomPassword() {
  std::random_device device;
  std::string out;
  const char* hex = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) out += hex[device() % 16];
  return out;
}

Result<int> FreePort(const std::string& address) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return InvalidArgument("local PostgreSQL: listen_address " + address + " is not IPv4");
  }
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return Unavailable("cannot find a free port on " + address);
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

// The account the server runs as: `postgres` when we are root (PostgreSQL refuses root).
struct RunAs {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

Result<RunAs> ServerAccount() {
  if (::geteuid() != 0) return RunAs{};
  const passwd* pw = ::getpwnam("postgres");
  if (pw == nullptr) {
    return FailedPrecondition(
        "running as root, and there is no `postgres` user to run the local "
        "PostgreSQL as (install the postgresql package)");
  }
  return RunAs{true, pw->pw_uid, pw->pw_gid};
}

// Runs argv (absolute path first), as `account`, with output appended to `log`. Returns the
// output's tail in the error when the command fails.
Status RunCommand(const std::vector<std::string>& argv, const RunAs& account, const fs::path& log) {
  pid_t pid = ::fork();
  if (pid < 0) return Internal("fork failed");
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    if (account.switch_user) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(account.gid) != 0 ||
          ::setuid(account.uid) != 0) {
        _exit(126);
      }
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  std::string output = ReadFile(log);
  if (output.size() > 2000) output = "..." + output.substr(output.size() - 2000);
  return Internal(fs::path(argv[0]).filename().string() + " failed (exit " +
                  std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "): " + output);
}

// Whether `account` can reach and use `dir` (checked by a child process running as it).
bool CanReach(const fs::path& dir, const RunAs& account) {
  if (!account.switch_user) return true;
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(account.gid) != 0 || ::setuid(account.uid) != 0) {
      _exit(2);
    }
    _exit(::access(dir.c_str(), X_OK) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A stable name for `data_dir` (FNV-1a, 64 bits, in hex).
std::string FolderNameOf(const std::string& data_dir) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : data_dir) hash = (hash ^ c) * 1099511628211ull;
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(hash));
  return name;
}

Status GiveTo(const fs::path& path, const RunAs& account) {
  if (!account.switch_user) return Status::Ok();
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(path, ec)) {
    if (::lchown(entry.path().c_str(), account.uid, account.gid) != 0) {
      return Internal("cannot chown " + entry.path().string());
    }
  }
  if (::chown(path.c_str(), account.uid, account.gid) != 0) {
    return Internal("cannot chown " + path.string());
  }
  return Status::Ok();
}

// Whether the server of `pgdata` runs: its postmaster.pid names a process that has not exited. A
// stale file (its server was killed; its process gone, or a zombie where PID 1 does not reap,
// which PostgreSQL itself would take for a running server) is removed, so that a start can follow.
bool PostmasterRunning(const fs::path& pgdata) {
  std::ifstream in(pgdata / "postmaster.pid");
  long pid = 0;
  if (!(in >> pid)) return false;
  if (ProcessRunning(static_cast<pid_t>(pid))) return true;
  std::error_code ec;
  fs::remove(pgdata / "postmaster.pid", ec);
  return false;
}

}  // namespace

Result<std::string> FindPostgresBinaries() {
  std::string best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const fs::path bin = entry.path() / "bin";
    if (!fs::exists(bin / "initdb") || !fs::exists(bin / "pg_ctl")) continue;
    int version = std::atoi(entry.path().filename().c_str());
    if (version > best_version) {
      best_version = version;
      best = bin.string();
    }
  }
  if (best.empty()) {
    return FailedPrecondition(
        "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin "
        "(install the postgresql package, or set db: to a server)");
  }
  return best;
}

Result<std::string> LocalPostgres::ServerDirFor(const std::string& data_dir) {
  const fs::path dir = data_dir;
  if (fs::exists(dir / "server_dir")) return ReadFile(dir / "server_dir");
  DET_ASSIGN_OR_RETURN(RunAs account, ServerAccount());
  if (fs::exists(dir / "pgdata" / "PG_VERSION") || CanReach(dir, account)) return data_dir;
  const fs::path server_dir = fs::path(kServerRoot) / FolderNameOf(data_dir);
  std::error_code ec;
  fs::create_directories(server_dir, ec);
  if (ec) return Internal("cannot create " + server_dir.string() + ": " + ec.message());
  fs::permissions(server_dir, fs::perms::owner_all, ec);
  DET_RETURN_IF_ERROR(WriteFile(dir / "server_dir", server_dir.string()));
  spdlog::info(
      "local PostgreSQL: the postgres user cannot reach {}, so its server files live in {}",
      data_dir, server_dir.string());
  return server_dir.string();
}

LocalPostgres::LocalPostgres(LocalPostgresOptions options, std::string bin_dir)
    : options_(std::move(options)), bin_dir_(std::move(bin_dir)) {}

LocalPostgres::~LocalPostgres() { (void)Stop(); }

Result<std::unique_ptr<LocalPostgres>> LocalPostgres::Start(LocalPostgresOptions options) {
  if (options.data_dir.empty()) return InvalidArgument("local PostgreSQL: data_dir is required");
  DET_ASSIGN_OR_RETURN(std::string bin_dir, FindPostgresBinaries());
  std::error_code ec;
  fs::create_directories(options.data_dir, ec);
  if (ec) return InvalidArgument("cannot create " + options.data_dir + ": " + ec.message());
  options.data_dir = fs::absolute(options.data_dir).string();
  std::unique_ptr<LocalPostgres> pg(new LocalPostgres(std::move(options), std::move(bin_dir)));
  DET_ASSIGN_OR_RETURN(pg->server_dir_, ServerDirFor(pg->options_.data_dir));
  DET_RETURN_IF_ERROR(pg->Initialize());
  DET_RETURN_IF_ERROR(pg->StartServer());
  DET_RETURN_IF_ERROR(pg->EnsureDatabase());
  return pg;
}

Status LocalPostgres::Initialize() {
  const fs::path dir = options_.data_dir;
  db_.host = options_.listen_address;
  db_.user = options_.user;
  db_.name = options_.database;
  if (!fs::exists(dir / "password"))
    DET_RETURN_IF_ERROR(WriteFile(dir / "password", RandomPassword()));
  db_.password = ReadFile(dir / "password");
  if (options_.port == 0 && fs::exists(dir / "port"))
    options_.port = std::atoi(ReadFile(dir / "port").c_str());
  if (options_.port == 0) {
    DET_ASSIGN_OR_RETURN(options_.port, FreePort(options_.listen_address));
  }
  DET_RETURN_IF_ERROR(WriteFile(dir / "port", std::to_string(options_.port)));
  db_.port = options_.port;
  const fs::path server = server_dir_;
  if (fs::exists(server / "pgdata" / "PG_VERSION")) return AdmitClientNetwork();  // reuse it

  DET_ASSIGN_OR_RETURN(RunAs account, ServerAccount());
  fs::create_directories(server / "pgdata");
  fs::create_directories(server / "run");
  DET_RETURN_IF_ERROR(WriteFile(server / "pwfile", db_.password));
  DET_RETURN_IF_ERROR(GiveTo(server, account));
  Status init = RunCommand({bin_dir_ + "/initdb", "-D", (server / "pgdata").string(), "-U",
                            options_.user, "--pwfile=" + (server / "pwfile").string(),
                            "--auth=scram-sha-256", "-E", "UTF8", "--locale=C"},
                           account, server / "initdb.log");
  fs::remove(server / "pwfile");
  if (!init.ok() && account.switch_user) {
    return init.WithContext("local PostgreSQL in " + server.string() +
                            " (the postgres user must be able to reach this folder)");
  }
  DET_RETURN_IF_ERROR(init.WithContext("local PostgreSQL in " + server.string()));
  return AdmitClientNetwork();
}

Status LocalPostgres::AdmitClientNetwork() {
  if (options_.client_network.empty()) return Status::Ok();
  const fs::path hba = fs::path(server_dir_) / "pgdata" / "pg_hba.conf";
  const std::string line = "host all all " + options_.client_network + " scram-sha-256";
  if (ReadFile(hba).find(line) != std::string::npos) return Status::Ok();
  std::ofstream out(hba, std::ios::app);
  out << "\n" << line << "\n";
  if (!out) return Internal("cannot write " + hba.string());
  return Status::Ok();
}

Status LocalPostgres::StartServer() {
  const fs::path dir = server_dir_;
  DET_ASSIGN_OR_RETURN(RunAs account, ServerAccount());
  std::string server_options = "-p " + std::to_string(options_.port) +
                               " -c listen_addresses=" + options_.listen_address + " -k " +
                               (dir / "run").string();
  for (const std::string& setting : options_.server_settings) server_options += " -c " + setting;
  // A server already running on this folder is reused, and left running by Stop(): it is not
  // ours.
  if (PostmasterRunning(dir / "pgdata")) return Status::Ok();
  DET_RETURN_IF_ERROR(
      RunCommand({bin_dir_ + "/pg_ctl", "-D", (dir / "pgdata").string(), "-l",
                  (dir / "postgres.log").string(), "-o", server_options, "-w", "-t", "60", "start"},
                 account, dir / "pg_ctl.log")
          .WithContext("local PostgreSQL on port " + std::to_string(options_.port) +
                       "; its log ends: " + LogTail(options_.data_dir)));
  running_ = true;
  spdlog::info("local PostgreSQL running on {}:{} (data in {})", options_.listen_address,
               options_.port, dir.string());
  return Status::Ok();
}

Status LocalPostgres::EnsureDatabase() {
  DbConfig admin = db_;
  admin.name = "postgres";
  DET_ASSIGN_OR_RETURN(auto connection, Connect(admin));
  try {
    pqxx::nontransaction tx(*connection);
    if (tx.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", db_.name).empty()) {
      tx.exec0("CREATE DATABASE " + tx.quote_name(db_.name));  // names can't be parameters
    }
  } catch (...) {
    return StatusFromException("creating database " + db_.name);
  }
  return Status::Ok();
}

Status LocalPostgres::Stop() { return StopServer("fast"); }

Result<bool> LocalPostgres::RunningIn(const std::string& data_dir) {
  DET_ASSIGN_OR_RETURN(std::string server_dir, ServerDirFor(fs::absolute(data_dir).string()));
  return PostmasterRunning(fs::path(server_dir) / "pgdata");
}

Status LocalPostgres::StopServerIn(const std::string& data_dir, bool immediate) {
  DET_ASSIGN_OR_RETURN(bool running, RunningIn(data_dir));
  if (!running) return Status::Ok();
  DET_ASSIGN_OR_RETURN(std::string bin_dir, FindPostgresBinaries());
  DET_ASSIGN_OR_RETURN(RunAs account, ServerAccount());
  DET_ASSIGN_OR_RETURN(std::string server_dir, ServerDirFor(fs::absolute(data_dir).string()));
  return RunCommand({bin_dir + "/pg_ctl", "-D", (fs::path(server_dir) / "pgdata").string(), "-m",
                     immediate ? "immediate" : "fast", "-w", "stop"},
                    account, fs::path(server_dir) / "pg_ctl.log");
}

std::string LocalPostgres::LogTail(const std::string& data_dir, size_t bytes) {
  auto server_dir = ServerDirFor(fs::absolute(data_dir).string());
  if (!server_dir.ok()) return server_dir.status().ToString();
  std::string log = ReadFile(fs::path(*server_dir) / "postgres.log");
  if (log.size() > bytes) log = "..." + log.substr(log.size() - bytes);
  return log;
}

Status LocalPostgres::StopServer(const std::string& mode) {
  if (!running_) return Status::Ok();
  running_ = false;
  DET_ASSIGN_OR_RETURN(RunAs account, ServerAccount());
  const fs::path dir = server_dir_;
  return RunCommand(
      {bin_dir_ + "/pg_ctl", "-D", (dir / "pgdata").string(), "-m", mode, "-w", "stop"}, account,
      dir / "pg_ctl.log");
}

Status LocalPostgres::Restart(std::chrono::milliseconds downtime) {
  if (!running_) return FailedPrecondition("this handle did not start the server");
  DET_RETURN_IF_ERROR(Stop());
  std::this_thread::sleep_for(downtime);
  return StartServer();
}

}  // namespace det::storage
