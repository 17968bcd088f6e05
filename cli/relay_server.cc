// `det __relay PATH` (relay.h): a single-threaded loop over the unix socket's clients and one
// DEALER connection to the master's gateway, which the gateway's ROUTER answers as it would a REQ
// (the empty delimiter frame is the relay's to add); replies go back to the det that asked by the
// request id.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "bus/codec.h"
#include "bus/envelope.h"
#include "bus/handshake_watch.h"
#include "bus/socket.h"
#include "cli/relay.h"
#include "cli/relay_frames.h"

namespace det::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxClients = 256;      // more wait in the listen backlog
constexpr int kMaxWaitingPerClient = 4;  // a det asks one thing at a time
constexpr size_t kMaxTargetBytes = 4096;

// Everything on stdin (the target det writes), up to kMaxTargetBytes.
std::string ReadStdin() {
  std::string text;
  char chunk[1024];
  while (text.size() < kMaxTargetBytes) {
    const ssize_t got = read(0, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(chunk, static_cast<size_t>(got));
  }
  return text;
}

// The connection to the gateway: a request is refused while it is down (ZMQ_IMMEDIATE: det then
// sends it itself, rather than the relay delivering it late, after det reported it failed), and a
// connection gone silent is noticed by heartbeats rather than kept.
zmq::socket_t DealerSocket(zmq::context_t& context) {
  zmq::socket_t dealer = bus::MakeSocket(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::immediate, 1);
  dealer.set(zmq::sockopt::heartbeat_ivl, 2000);
  dealer.set(zmq::sockopt::heartbeat_timeout, 6000);
  return dealer;
}

// The listening socket at `path`, held by this relay alone (PATH.lock); -1 when another relay
// holds it or the socket cannot be made.
int Listen(const std::string& path) {
  const int lock = open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) return -1;  // kept open until exit
  unlink(path.c_str());  // a socket a relay that died left behind
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const mode_t old_mask = umask(077);
  const bool bound =
      fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  umask(old_mask);
  if (!bound || listen(fd, 128) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

class Relay {
 public:
  Relay(const RelayTarget& target, std::string path, int listener)
      : idle_(target.idle),
        path_(std::move(path)),
        listener_(listener),
        dealer_(DealerSocket(context_)),
        watch_(std::make_unique<bus::HandshakeWatch>(context_, dealer_, target.security.mode)),
        connected_(bus::Connect(dealer_, target.endpoint, target.security).ok()) {}

  ~Relay() {
    StopListening();
    for (auto& [fd, client] : clients_) close(fd);
    watch_.reset();
  }

  int Run() {
    if (!connected_) return 1;
    const Clock::time_point started = Clock::now();
    last_call_ = started;
    while (true) {
      const Clock::time_point now = Clock::now();
      if (listener_ >= 0 && (now - started >= kRelayLifetime ||
                             (clients_.empty() && pending_.empty() && now - last_call_ >= idle_))) {
        StopListening();  // new calls go to the master themselves (and start a new relay)
      }
      if (listener_ < 0 && clients_.empty()) return 0;
      if (!PollOnce()) return 0;
    }
  }

 private:
  struct Client {
    std::string in;   // bytes read, not yet a whole frame
    std::string out;  // bytes to send
    int waiting = 0;  // requests forwarded, not yet answered
  };

  void StopListening() {
    if (listener_ < 0) return;
    close(listener_);
    unlink(path_.c_str());
    listener_ = -1;
  }

  // False when the relay must end (its handshake failed).
  bool PollOnce() {
    std::vector<zmq::pollitem_t> items = {
        {dealer_.handle(), 0, ZMQ_POLLIN, 0}, watch_->item(), {nullptr, listener_, ZMQ_POLLIN, 0}};
    if (listener_ < 0 || clients_.size() >= kMaxClients) items[2].events = 0;
    std::vector<int> polled;
    for (const auto& [fd, client] : clients_) {
      items.push_back({nullptr, fd,
                       static_cast<short>(ZMQ_POLLIN | (client.out.empty() ? 0 : ZMQ_POLLOUT)), 0});
      polled.push_back(fd);
    }
    bus::Poll(items.data(), static_cast<int>(items.size()), std::chrono::milliseconds(1000));
    if ((items[1].revents & ZMQ_POLLIN) && watch_->Read().has_value()) return false;
    if (items[0].revents & ZMQ_POLLIN) ReceiveReplies();
    if (items[2].revents & ZMQ_POLLIN) Accept();
    for (size_t i = 0; i < polled.size(); ++i) {
      const short events = items[3 + i].revents;
      auto it = clients_.find(polled[i]);
      if (it == clients_.end() || events == 0) continue;
      const bool keep =
          ((events & ZMQ_POLLOUT) == 0 || SendTo(polled[i], it->second)) &&
          ((events & (ZMQ_POLLIN | ZMQ_POLLERR)) == 0 || ReadFrom(polled[i], it->second));
      if (!keep) Drop(polled[i]);
    }
    return true;
  }

  void Accept() {
    while (clients_.size() < kMaxClients) {
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      ucred peer{};
      socklen_t size = sizeof peer;
      if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.uid != getuid()) {
        close(fd);  // only this user's processes use this user's connection
        continue;
      }
      clients_[fd];
    }
  }

  // Reads what the client sent and forwards each whole request. False: drop the client.
  bool ReadFrom(int fd, Client& client) {
    char chunk[65536];
    while (true) {
      const ssize_t got = recv(fd, chunk, sizeof chunk, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (got <= 0) return false;  // det ended (or gave up waiting)
      client.in.append(chunk, static_cast<size_t>(got));
    }
    bool too_large = false;
    while (std::optional<std::string> frame = TakeRelayFrame(client.in, &too_large)) {
      Result<bus::RpcRequest> request = bus::Decode<bus::RpcRequest>(*frame);
      if (!request.ok() || ++client.waiting > kMaxWaitingPerClient) return false;
      bus::Header header;
      header.sender = "det";
      if (!bus::Send(dealer_, {""}, header, *request).ok()) return false;
      pending_[request->request_id] = fd;
      last_call_ = Clock::now();
    }
    return !too_large;
  }

  bool SendTo(int fd, Client& client) {
    while (!client.out.empty()) {
      const ssize_t put = send(fd, client.out.data(), client.out.size(), MSG_NOSIGNAL);
      if (put < 0 && errno == EINTR) continue;
      if (put < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (put <= 0) return false;
      client.out.erase(0, static_cast<size_t>(put));
    }
    return true;
  }

  void ReceiveReplies() {
    std::vector<zmq::message_t> frames;
    while (bus::ReceiveFrames(dealer_, &frames)) {
      if (frames.empty() || frames[0].size() != 0) continue;  // not an answer to a REQ envelope
      Result<bus::Envelope> envelope = bus::ParseEnvelope(frames, 1);
      if (!envelope.ok()) continue;
      Result<bus::RpcReply> reply = envelope->Decode<bus::RpcReply>();
      if (!reply.ok()) continue;
      auto waiting = pending_.find(reply->request_id);
      if (waiting == pending_.end()) continue;  // its det is gone
      const int fd = waiting->second;
      pending_.erase(waiting);
      auto client = clients_.find(fd);
      if (client == clients_.end()) continue;
      --client->second.waiting;
      client->second.out += RelayFrame(bus::Encode(*reply));
      if (!SendTo(fd, client->second)) Drop(fd);
    }
  }

  void Drop(int fd) {
    close(fd);
    clients_.erase(fd);
    std::erase_if(pending_, [fd](const auto& entry) { return entry.second == fd; });
  }

  Duration idle_;
  std::string path_;
  int listener_;
  zmq::context_t context_{1};
  zmq::socket_t dealer_;
  std::unique_ptr<bus::HandshakeWatch> watch_;
  bool connected_;
  std::map<int, Client> clients_;
  std::map<std::string, int> pending_;  // request id -> the client that sent it
  Clock::time_point last_call_;
};

}  // namespace

int RunRelay(const std::string& path) {
  const std::optional<RelayTarget> target = ReadRelayTarget(ReadStdin());
  if (!target || path.empty()) return 2;
  // Detached: det waits for this first process only until the target is read.
  const pid_t child = fork();
  if (child != 0) return child < 0 ? 1 : 0;
  const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) dup2(null, 0);
  close_range(3, ~0U, 0);         // nothing of det's caller's (a shell's pipes) stays open here
  if (chdir("/") != 0) return 1;  // nor its folder busy
  const int listener = Listen(path);
  if (listener < 0) return 0;  // another relay serves this target
  return Relay(*target, path, listener).Run();
}

}  // namespace det::cli
