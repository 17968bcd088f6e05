#include "bus/event_publisher.h"

#include <spdlog/spdlog.h>

#include <thread>

namespace det::bus {

EventPublisher::EventPublisher(zmq::context_t& context, std::string name, const Clock& clock,
                               SocketLimits limits)
    : socket_(MakeSocket(context, zmq::socket_type::xpub, limits)),
      name_(std::move(name)),
      clock_(clock),
      epoch_(NewEpoch()) {}

Status EventPublisher::Connect(const std::string& endpoint, const SocketSecurity& security) {
  return bus::Connect(socket_, endpoint, security);
}

Status EventPublisher::PublishEncoded(std::string type, std::string body, std::string key,
                                      bool tombstone) {
  Header header = MakeHeader(name_, epoch_, ++next_seq_[type], clock_);
  header.key = std::move(key);
  header.tombstone = tombstone;
  if (!hold_until_pump_) Pump();
  if (hold_until_pump_ || !ready_ || !held_.empty()) {
    if (held_.size() >= kMaxHeld) {
      return Unavailable("event broker not reachable; " + std::to_string(kMaxHeld) +
                         " events already held back");
    }
    held_.push_back({std::move(type), std::move(header), std::move(body)});
    return Status::Ok();
  }
  return SendEnvelope(socket_, {}, type, header, body);
}

void EventPublisher::Pump() {
  zmq::message_t notice;
  while (socket_.recv(notice, zmq::recv_flags::dontwait)) {
    if (notice.size() >= 1 && notice.data<uint8_t>()[0] == 1) ready_ = true;
  }
  while (ready_ && !held_.empty()) {
    Held& h = held_.front();
    if (!SendEnvelope(socket_, {}, h.type, h.header, h.body).ok()) break;
    held_.pop_front();
  }
}

bool EventPublisher::WaitReady(Duration timeout) {
  const Clock& real = RealClock::Instance();  // the socket's own time, as Poll's timeout is
  const MonoTime deadline = real.Now() + timeout;
  while (true) {
    Pump();
    if (ready_ && held_.empty()) return true;
    if (real.Now() >= deadline) return false;
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    Poll(&item, 1, std::chrono::milliseconds(10));
  }
}

}  // namespace det::bus
