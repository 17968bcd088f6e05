#include "cli/relay.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>

#include "bus/codec.h"
#include "cli/relay_frames.h"
#include "common/process.h"

namespace det::cli {
namespace {

// Bumped when what det and a relay say to each other changes: a det never talks to an older
// relay (the socket's name differs).
constexpr const char* kRelayProtocol = "relay-1";

// 1 to 3600 seconds, written as a plain number.
std::optional<std::chrono::seconds> IdleSeconds(const std::string& text) {
  if (text.empty() || text.size() > 4 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const int seconds = std::stoi(text);
  if (seconds < 1 || seconds > 3600) return std::nullopt;
  return std::chrono::seconds(seconds);
}

bool RelaysOff() {
  const char* setting = std::getenv("DET_RELAY");
  return setting != nullptr && std::strcmp(setting, "0") == 0;
}

// The user's private folder for relay sockets, made if missing; "" when it is not private.
std::string PrivateFolder() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string folder = runtime != nullptr && *runtime != '\0'
                                 ? std::string(runtime) + "/det"
                                 : "/tmp/det-" + std::to_string(getuid());
  (void)mkdir(folder.c_str(), 0700);
  struct stat st {};
  if (lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
      (st.st_mode & 077) != 0) {
    return "";
  }
  return folder;
}

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t put = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    sent += static_cast<size_t>(put);
  }
  return true;
}

enum class Asked { kAnswered, kNoRelay, kTimedOut };

// `request` through the relay at `path`. kNoRelay when none runs there or it ended before
// answering (the request may have reached the master: the caller resends it with the same id).
Asked AskRelay(const std::string& path, const bus::RpcRequest& request,
               std::chrono::milliseconds timeout, bus::RpcReply* reply) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Asked::kNoRelay;
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  const timeval limit{static_cast<time_t>(timeout.count() / 1000),
                      static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  // A relay that is stopped or swamped holds neither the connect nor the send past the timeout.
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return Asked::kNoRelay;
  }
  ucred peer{};
  socklen_t size = sizeof peer;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.uid != getuid()) {
    return Asked::kNoRelay;  // not this user's relay: never hand it a token
  }
  const std::string encoded = bus::Encode(request);
  if (encoded.size() > kMaxRelayFrameBytes) return Asked::kNoRelay;  // too large: sent direct
  if (!SendAll(fd, RelayFrame(encoded))) return Asked::kNoRelay;
  std::string buffer;
  char chunk[65536];
  while (true) {
    bool too_large = false;
    if (std::optional<std::string> frame = TakeRelayFrame(buffer, &too_large)) {
      Result<bus::RpcReply> decoded = bus::Decode<bus::RpcReply>(*frame);
      if (!decoded.ok() || decoded->request_id != request.request_id) return Asked::kNoRelay;
      *reply = std::move(decoded).value();
      return Asked::kAnswered;
    }
    if (too_large) return Asked::kNoRelay;
    const ssize_t got = recv(fd, chunk, sizeof chunk, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Asked::kTimedOut;
    if (got <= 0) return Asked::kNoRelay;
    buffer.append(chunk, static_cast<size_t>(got));
  }
}

// Starts `det __relay PATH` in a session of its own with /dev/null for output and an empty
// environment, writes it the target and waits for it to detach (it forks and its first process
// exits once it has read the target).
void StartRelay(const std::string& path, const RelayTarget& target) {
  int keys[2];
  if (pipe2(keys, O_CLOEXEC) != 0) return;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, keys[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  InitSpawnWithDefaultSignals(attr, POSIX_SPAWN_SETSID);
  std::string self = "/proc/self/exe";
  char named[4096];  // what ps shows: this det's own path
  const ssize_t length = readlink(self.c_str(), named, sizeof named - 1);
  std::string shown = length > 0 ? std::string(named, static_cast<size_t>(length)) : "det";
  std::string arg = kRelayArg, where = path;
  char* argv[] = {shown.data(), arg.data(), where.data(), nullptr};
  char* env[] = {nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, self.c_str(), &actions, &attr, argv, env);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(keys[0]);
  if (rc == 0) {
    RelayTarget told = target;
    const char* idle = std::getenv("DET_RELAY_IDLE");
    told.idle = IdleSeconds(idle != nullptr ? idle : "").value_or(kRelayIdle);
    const std::string text = WriteRelayTarget(told);
    struct sigaction ignore {
    }, previous{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous);  // a relay that exited at once is no reason to die
    (void)!write(keys[1], text.data(), text.size());
    sigaction(SIGPIPE, &previous, nullptr);
  }
  close(keys[1]);
  if (rc == 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace

std::string WriteRelayTarget(const RelayTarget& target) {
  const bool curve = target.security.mode != bus::SocketSecurity::Mode::kPlaintext;
  return target.endpoint + "\n" + (curve ? "curve" : "plaintext") + "\n" +
         target.security.server_public_key + "\n" + target.security.own.public_key + "\n" +
         target.security.own.secret_key + "\n" + std::to_string(target.idle.count()) + "\n";
}

std::optional<RelayTarget> ReadRelayTarget(std::string_view text) {
  std::istringstream lines{std::string(text)};
  std::string mode, idle;
  RelayTarget target;
  bus::SocketSecurity& security = target.security;
  if (!std::getline(lines, target.endpoint) || !std::getline(lines, mode) ||
      !std::getline(lines, security.server_public_key) ||
      !std::getline(lines, security.own.public_key) ||
      !std::getline(lines, security.own.secret_key) || !std::getline(lines, idle) ||
      target.endpoint.empty()) {
    return std::nullopt;
  }
  const std::optional<std::chrono::seconds> limit = IdleSeconds(idle);
  if (!limit) return std::nullopt;
  target.idle = *limit;
  if (mode == "curve") {
    security.mode = bus::SocketSecurity::Mode::kCurveClient;
    if (!bus::IsZ85Key(security.server_public_key) || !bus::IsZ85Key(security.own.public_key) ||
        !bus::IsZ85Key(security.own.secret_key)) {
      return std::nullopt;
    }
  } else if (mode != "plaintext") {
    return std::nullopt;
  }
  return target;
}

std::string RelaySocketPath(const RelayTarget& target) {
  if (RelaysOff()) return "";
  const std::string folder = PrivateFolder();
  if (folder.empty()) return "";
  const bool curve = target.security.mode != bus::SocketSecurity::Mode::kPlaintext;
  // Whatever decides which connection a call may use names the socket (the secret key does not:
  // the public key stands for it).
  const size_t name = std::hash<std::string>{}(
      std::string(kRelayProtocol) + "\n" + target.endpoint + "\n" + (curve ? "curve" : "plain") +
      "\n" + target.security.server_public_key + "\n" + target.security.own.public_key);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016zx", name);
  std::string path = folder + "/relay-" + hex + ".sock";
  return path.size() < sizeof(sockaddr_un{}.sun_path) ? path : "";
}

Result<bus::Bytes> RelayedCall(const RelayTarget& target, const bus::RpcRequest& request,
                               const bus::RpcClientConfig& config, const DirectClient& direct) {
  const std::string path = RelaySocketPath(target);
  if (path.empty()) return direct(config).CallRaw(request);
  bus::RpcReply reply;
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(config.timeout);
  switch (AskRelay(path, request, std::max(timeout, std::chrono::milliseconds(1)), &reply)) {
    case Asked::kAnswered:
      if (reply.code != 0) return det::Status(static_cast<StatusCode>(reply.code), reply.error);
      return std::move(reply.body);
    case Asked::kTimedOut: {  // the other attempts go direct, with the same id: answered once
      bus::RpcClientConfig rest = config;
      rest.attempts = std::max(1, config.attempts - 1);
      return direct(rest).CallRaw(request);
    }
    case Asked::kNoRelay:
      break;
  }
  bus::RpcClient& client = direct(config);
  Result<bus::Bytes> answer = client.CallRaw(request);
  // Only once the master answered: a relay would meet the same dead master or refused keys.
  if (answer.ok() || (answer.status().code() != StatusCode::kUnavailable &&
                      !client.handshake_failure().has_value())) {
    StartRelay(path, target);
  }
  return answer;
}

}  // namespace det::cli
