// test-postgres: the PostgreSQL server the integration test processes of one ctest run share (the
// ctest fixture `test_postgres`, tests/CMakeLists.txt), started the way the product starts its
// own (storage::LocalPostgres). Each test process then makes its own databases in it
// (testing/postgres_fixture.h), instead of starting a server of its own.
//
//   test-postgres start DIR   stops a server a crashed run left in DIR, starts a fresh one there
//                             and leaves it running
//   test-postgres stop DIR    stops it at once (no shutdown checkpoint) and removes DIR; fails
//                             (printing its log's end) when the server had ended before
// The server runs without fsync: it is thrown away after the run, and the tests' settings that
// matter (synchronous_commit per transaction) are kept.
#include <cstdio>
#include <filesystem>
#include <string>

#include "storage/local_postgres.h"

namespace {

namespace fs = std::filesystem;

// Stops a server running in `dir` and removes its files (nothing when `dir` holds none). False
// when `dir` held a server that had ended before (its log's end is printed: why it ended).
bool StopAndRemove(const std::string& dir) {
  using det::storage::LocalPostgres;
  std::error_code ec;
  if (!fs::exists(fs::path(dir) / "port")) {
    fs::remove_all(dir, ec);
    return true;
  }
  auto running = LocalPostgres::RunningIn(dir);
  const bool ended_early = running.ok() && !*running;
  if (ended_early) {
    std::fprintf(stderr, "test-postgres: the server in %s was not running; its log ends:\n%s\n",
                 dir.c_str(), LocalPostgres::LogTail(dir).c_str());
  }
  if (auto stopped = LocalPostgres::StopServerIn(dir, /*immediate=*/true); !stopped.ok()) {
    std::fprintf(stderr, "test-postgres: %s\n", stopped.ToString().c_str());
  }
  // Where the postgres user cannot reach `dir`, the server's files are elsewhere.
  auto server_dir = LocalPostgres::ServerDirFor(dir);
  if (server_dir.ok() && *server_dir != dir) fs::remove_all(*server_dir, ec);
  fs::remove_all(dir, ec);
  return !ended_early;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc == 3 ? argv[1] : "";
  if (command != "start" && command != "stop") {
    std::fprintf(stderr, "usage: test-postgres start|stop DIR\n");
    return 2;
  }
  const std::string dir = fs::absolute(argv[2]).string();
  const bool stopped_running_server = StopAndRemove(dir);
  if (command == "stop") return stopped_running_server ? 0 : 1;
  // Thrown away after the run: no fsync, no full-page writes (each test process makes databases,
  // which PostgreSQL 15 copies through its WAL).
  det::storage::LocalPostgresOptions options{dir};
  options.server_settings = {"fsync=off", "full_page_writes=off"};
  auto pg = det::storage::LocalPostgres::Start(options);
  if (!pg.ok()) {
    std::fprintf(stderr, "test-postgres: %s\n", pg.status().ToString().c_str());
    return 1;
  }
  std::printf("test-postgres: serving on port %d from %s\n", (*pg)->db().port, dir.c_str());
  (void)pg->release();  // left running for the run's test processes; `stop` ends it
  return 0;
}
