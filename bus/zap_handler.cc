#include "bus/zap_handler.h"

#include <array>

#include "bus/drop_log.h"
#include "bus/socket.h"
#include "common/thread_name.h"

namespace det::bus {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";

}  // namespace

ZapHandler::ZapHandler(zmq::context_t& context, std::vector<AllowedClient> allowed,
                       std::set<std::string> open_roles)
    : socket_(context, zmq::socket_type::rep), open_roles_(std::move(open_roles)) {
  for (AllowedClient& client : allowed) {
    allowed_[client.public_key].insert(client.roles.begin(), client.roles.end());
  }
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind(kZapEndpoint);
  thread_ = std::thread([this] { Run(); });
}

ZapHandler::ZapHandler(zmq::context_t& context, const std::vector<std::string>& allowed_public_keys)
    : ZapHandler(context, [&] {
        std::vector<AllowedClient> all;
        for (const std::string& key : allowed_public_keys) all.push_back({key, {}});
        return all;
      }()) {}

ZapHandler::~ZapHandler() {
  stop_ = true;
  thread_.join();
}

void ZapHandler::Allow(const std::string& public_key) {
  std::lock_guard lock(mu_);
  allowed_[public_key].clear();
}

std::string ZapHandler::WhyRefused(const std::string& z85, const std::string& domain) const {
  if (open_roles_.count(domain)) return "";  // any key (who calls is proven otherwise)
  std::lock_guard lock(mu_);
  auto it = allowed_.find(z85);
  if (it == allowed_.end()) return "unknown CURVE key " + z85;
  const std::set<std::string>& roles = it->second;
  if (roles.empty() || domain == kDefaultZapDomain || roles.count(domain)) return "";
  std::string held;
  for (const std::string& role : roles) held += (held.empty() ? "" : ",") + role;
  return "CURVE key " + z85 + " (roles " + held + ") may not use the " + domain + " port";
}

void ZapHandler::Run() {
  NameThisThread("zap");
  DropLog refusals("bus ZAP handler", RealClock::Instance());
  while (!stop_) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (Poll(&item, 1, std::chrono::milliseconds(50)) == 0) continue;
    std::vector<zmq::message_t> frames;
    zmq::message_t frame;
    do {
      if (!socket_.recv(frame, zmq::recv_flags::none)) break;
      bool more = frame.more();
      frames.push_back(std::move(frame));
      if (!more) break;
    } while (true);
    // Request: version, request id, domain, address, routing id, mechanism, credentials...
    std::string request_id = frames.size() > 1 ? frames[1].to_string() : "";
    std::string mechanism = frames.size() > 5 ? frames[5].to_string() : "";
    std::string address = frames.size() > 3 ? frames[3].to_string() : "?";
    const std::string domain = frames.size() > 2 ? frames[2].to_string() : "";
    bool ok = false;
    std::array<char, 41> z85{};
    if (mechanism == "CURVE" && frames.size() >= 7 && frames[6].size() == 32) {
      zmq_z85_encode(z85.data(), frames[6].data<uint8_t>(), 32);
      const std::string why = WhyRefused(z85.data(), domain);
      ok = why.empty();
      if (!ok) refusals.Record(address, PermissionDenied(why));
    } else {
      refusals.Record(address,
                      PermissionDenied("mechanism " + mechanism + " refused: CURVE required"));
    }
    (ok ? admitted_ : denied_)++;
    socket_.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
    socket_.send(ok ? zmq::str_buffer("200") : zmq::str_buffer("400"), zmq::send_flags::sndmore);
    socket_.send(ok ? zmq::str_buffer("OK") : zmq::str_buffer("unknown client key"),
                 zmq::send_flags::sndmore);
    // User-Id: the client's key, which the server reads off each message (ClientKeyOf).
    socket_.send(ok ? zmq::buffer(std::string_view(z85.data())) : zmq::str_buffer(""),
                 zmq::send_flags::sndmore);
    socket_.send(zmq::str_buffer(""), zmq::send_flags::none);
  }
}

std::string ClientKeyOf(const zmq::message_t& message) {
  // zmq_msg_gets is not const in its signature; it only reads the message's metadata.
  const char* key = zmq_msg_gets(const_cast<zmq::message_t&>(message).handle(), "User-Id");
  return key ? key : "";
}

}  // namespace det::bus
