#include "bus/rpc_client.h"

#include <random>

#include "bus/agent_channel.h"
#include "common/random_seed.h"

namespace det::bus {

std::string RandomId() {
  static thread_local std::mt19937_64 rng(RandomSeed());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

std::string RandomUuid() {
  static thread_local std::mt19937_64 rng(RandomSeed());
  const uint64_t high = (rng() & ~uint64_t{0xf000}) | 0x4000;                     // version 4
  const uint64_t low = (rng() & ~(uint64_t{0x3} << 62)) | (uint64_t{0x2} << 62);  // variant 10
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(high >> 32),
                static_cast<unsigned long long>((high >> 16) & 0xffff),
                static_cast<unsigned long long>(high & 0xffff),
                static_cast<unsigned long long>(low >> 48),
                static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return buf;
}

RpcClient::RpcClient(zmq::context_t& context, std::string endpoint, SocketSecurity security,
                     RpcClientConfig config, SocketLimits limits)
    : context_(context),
      endpoint_(std::move(endpoint)),
      security_(std::move(security)),
      config_(config),
      limits_(limits) {}

Result<Bytes> RpcClient::CallRaw(const std::string& method, const Bytes& params,
                                 const std::string& token) {
  return CallRaw(RpcRequest{RandomId(), token, method, params});
}

Result<Bytes> RpcClient::CallRaw(const RpcRequest& request) {
  for (int attempt = 1; attempt <= config_.attempts; ++attempt) {
    ++attempts_made_;
    Result<RpcReply> reply = Attempt(request);
    if (!reply.ok()) {
      if (reply.status().code() == StatusCode::kDeadlineExceeded) continue;
      return reply.status();
    }
    if (reply->code != 0) return Status(static_cast<StatusCode>(reply->code), reply->error);
    return std::move(reply->body);
  }
  return NoReply(endpoint_, config_);
}

Status NoReply(const std::string& endpoint, const RpcClientConfig& config) {
  return Unavailable(
      "no reply from " + endpoint + " after " + std::to_string(config.attempts) + " attempts of " +
      std::to_string(
          std::chrono::duration_cast<std::chrono::milliseconds>(config.timeout).count()) +
      " ms; is det-master running and reachable?");
}

void RpcClient::CloseSocket() {
  watch_.reset();
  socket_.reset();
}

Result<RpcReply> RpcClient::Attempt(const RpcRequest& request) {
  if (!socket_) {
    socket_ = std::make_unique<zmq::socket_t>(MakeSocket(context_, zmq::socket_type::req, limits_));
    watch_ = std::make_unique<HandshakeWatch>(context_, *socket_, security_.mode);
    DET_RETURN_IF_ERROR(Connect(*socket_, endpoint_, security_));
  }
  Header header;
  header.sender = "det";
  DET_RETURN_IF_ERROR(Send(*socket_, {}, header, request));
  const Clock& real = RealClock::Instance();  // the socket's own time, as Poll's timeout is
  const MonoTime deadline = real.Now() + config_.timeout;
  std::vector<zmq::message_t> frames;
  while (real.Now() < deadline) {
    zmq::pollitem_t items[] = {{socket_->handle(), 0, ZMQ_POLLIN, 0}, watch_->item()};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - real.Now());
    Poll(items, 2, std::max(left, std::chrono::milliseconds(1)));
    if (items[1].revents & ZMQ_POLLIN) {
      if (std::optional<HandshakeFailure> failure = watch_->Read()) {
        handshake_failure_ = failure;
        CloseSocket();
        return PermissionDenied("the master at " + Describe(*failure, endpoint_));
      }
    }
    if (!(items[0].revents & ZMQ_POLLIN) || !ReceiveFrames(*socket_, &frames)) continue;
    answered_ = true;
    auto envelope = ParseEnvelope(frames, 0);
    if (!envelope.ok()) return envelope.status().WithContext("malformed reply from the master");
    auto reply = envelope->Decode<RpcReply>();
    if (!reply.ok()) return reply.status().WithContext("malformed reply from the master");
    if (reply->request_id != request.request_id && !reply->request_id.empty()) continue;
    return reply;
  }
  CloseSocket();  // a REQ socket with an unanswered request cannot be reused
  return DeadlineExceeded("no reply within the timeout");
}

}  // namespace det::bus
