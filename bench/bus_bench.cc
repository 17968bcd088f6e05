// bus_bench: what the bus costs on top of raw libzmq, over TCP loopback.
//
// Every figure is printed next to a raw libzmq baseline measured in the same run, and the ratio:
//
//   b  the bus's typed path: det::bus::Send of a BenchSample, received with ReceiveFrames +
//      ParseEnvelope + Envelope::Decode<BenchSample>();
//   a  raw PUSH/PULL carrying the same three frames [type][header][body] the bus puts on the wire,
//      encoded once before the run and sent as they are (no encode, no decode);
//   a' raw PUSH/PULL carrying one frame as long as the bus's body (200 bytes), for transparency.
//
// and for the request/reply gateway, RpcServer + RpcClient::CallRaw against raw REQ/REP sending the
// gateway's pre-encoded request and reply frames. Each is run in plaintext and with CURVE.
//
// Usage: bus_bench [--short]. --short uses small counts (CI smoke run, a few seconds). The exit
// status is 0 unless something fails functionally (a wrong or undecodable message, a timeout);
// timings are reported, never asserted. bench/README.md explains the figures.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus/agent_channel.h"
#include "bus/catalog/rpc.h"
#include "bus/codec.h"
#include "bus/envelope.h"
#include "bus/rpc_client.h"
#include "bus/rpc_server.h"
#include "bus/security.h"
#include "bus/socket.h"
#include "bus/zap_handler.h"
#include "common/clock.h"
#include "common/status.h"

namespace det::bench {
namespace {

using bus::Header;
using SteadyTime = std::chrono::steady_clock::time_point;

// Any wait longer than this means the benchmark is broken, not slow.
constexpr auto kStallTimeout = std::chrono::seconds(10);
constexpr size_t kBodyBytes = 200;
constexpr std::string_view kSender = "bench";
constexpr std::string_view kEchoMethod = "bench.echo";

// The benchmark's message. It is not part of the bus catalog: no component sends it.
struct BenchSample {
  static constexpr std::string_view kType = "bench.sample";
  std::string payload;  // filler that brings the encoded body to kBodyBytes
  uint64_t index = 0;   // position in the run; receivers check it
  uint32_t worker = 0;
  int64_t created_at = 0;
  bool last = false;
  bool operator==(const BenchSample&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("payload", s.payload, bus::kRequired);
    v("index", s.index, bus::kRequired);
    v("worker", s.worker);
    v("created_at", s.created_at);
    v("last", s.last);
  }
};

// Message indexes on the wire start here, so that every index (and header seq) encodes to the same
// 5 bytes and every message of a run has exactly the size of the pre-encoded baseline frames.
constexpr uint64_t kIndexBase = uint64_t{1} << 20;

// A sample numbered kIndexBase + `index` whose encoding is kBodyBytes long.
BenchSample MakeSample(uint64_t index) {
  BenchSample sample;
  sample.index = kIndexBase + index;
  sample.worker = 7;
  sample.created_at = 1'767'225'600'000'000'000;  // 2026-01-01, nanoseconds: 9 bytes on the wire
  for (size_t length = 0; length <= kBodyBytes; ++length) {
    sample.payload.assign(length, 'x');
    if (bus::Encode(sample).size() >= kBodyBytes) break;
  }
  return sample;
}

Header MakeBenchHeader(uint64_t epoch, uint64_t seq) {
  return bus::MakeHeader(std::string(kSender), epoch, seq, RealClock::Instance());
}

std::string EncodeHeader(const Header& header) { return bus::Encode(header); }

// ---------------------------------------------------------------------------------------------
// Security and connection setup.

struct Security {
  bool curve = false;
  bus::SocketSecurity server;
  bus::SocketSecurity client;
};

Result<Security> MakeSecurity(bool curve) {
  Security security;
  security.curve = curve;
  if (!curve) return security;
  DET_ASSIGN_OR_RETURN(bus::CurveKeyPair server_keys, bus::GenerateCurveKeyPair());
  DET_ASSIGN_OR_RETURN(bus::CurveKeyPair client_keys, bus::GenerateCurveKeyPair());
  security.server.mode = bus::SocketSecurity::Mode::kCurveServer;
  security.server.own = server_keys;
  security.server.allowed_clients = {{client_keys.public_key, {}}};
  security.client.mode = bus::SocketSecurity::Mode::kCurveClient;
  security.client.own = client_keys;
  security.client.server_public_key = server_keys.public_key;
  return security;
}

// Two contexts, as if server and client were separate processes (each gets its own I/O thread),
// and for CURVE the server's ZAP handler, constructed before any server socket binds. Declare
// sockets after a Contexts so that they close first.
struct Contexts {
  explicit Contexts(const Security& security) {
    if (security.curve) {
      zap = std::make_unique<bus::ZapHandler>(server, security.server.allowed_clients);
    }
  }
  // Internal if CURVE is on but the ZAP handler admitted no client: the run was not encrypted.
  Status CheckCurveUsed() const {
    if (zap && zap->admitted() == 0) return Internal("CURVE on, but no client went through ZAP");
    return Status::Ok();
  }
  zmq::context_t server;
  zmq::context_t client;
  std::unique_ptr<bus::ZapHandler> zap;
};

constexpr const char* kLoopback = "tcp://127.0.0.1:0";

// Binds `socket` (server side) to a free loopback port; returns the endpoint to connect to.
Result<std::string> BindLoopback(zmq::socket_t& socket, const Security& security) {
  return bus::Bind(socket, kLoopback, security.server);
}

// Waits up to kStallTimeout for `events` (ZMQ_POLLIN or ZMQ_POLLOUT) on `socket`.
bool WaitFor(zmq::socket_t& socket, short events) {
  zmq::pollitem_t item{socket.handle(), 0, events, 0};
  bus::Poll(&item, 1, std::chrono::duration_cast<std::chrono::milliseconds>(kStallTimeout));
  return (item.revents & events) != 0;
}

// ---------------------------------------------------------------------------------------------
// The three ways a message travels: how it is sent and how it is received and checked.

enum class Path { kBus, kRaw3, kRaw1 };

// The bytes the bus puts on the wire for one representative sample, encoded once.
struct Wire {
  std::string type;
  std::string header;
  std::string body;
};

Wire MakeWire() {
  return Wire{std::string(BenchSample::kType),
              EncodeHeader(MakeBenchHeader(bus::NewEpoch(), kIndexBase)),
              bus::Encode(MakeSample(0))};
}

class Sender {
 public:
  Sender(Path path, const Wire& wire) : path_(path), wire_(wire), sample_(MakeSample(0)) {}

  // Sends message `index`; waits (bounded) while the send high-water mark is reached.
  Status Send(zmq::socket_t& socket, uint64_t index) {
    switch (path_) {
      case Path::kBus:
        return SendBus(socket, index);
      case Path::kRaw3:
        socket.send(zmq::buffer(wire_.type), zmq::send_flags::sndmore);
        socket.send(zmq::buffer(wire_.header), zmq::send_flags::sndmore);
        socket.send(zmq::buffer(wire_.body), zmq::send_flags::none);
        return Status::Ok();
      case Path::kRaw1:
        socket.send(zmq::buffer(wire_.body), zmq::send_flags::none);
        return Status::Ok();
    }
    return Internal("unknown path");
  }

 private:
  Status SendBus(zmq::socket_t& socket, uint64_t index) {
    sample_.index = kIndexBase + index;
    const Header header = MakeBenchHeader(epoch_, sample_.index);
    for (;;) {
      Status status = bus::Send(socket, {}, header, sample_);
      if (status.ok()) return status;
      if (!WaitFor(socket, ZMQ_POLLOUT)) return status.WithContext("bus send stalled");
    }
  }

  Path path_;
  const Wire& wire_;
  BenchSample sample_;
  uint64_t epoch_ = bus::NewEpoch();
};

class Receiver {
 public:
  Receiver(Path path, const Wire& wire)
      : path_(path), wire_(wire), payload_bytes_(MakeSample(0).payload.size()) {}

  // Receives and checks every message already waiting, up to `limit`; returns how many. The bus
  // path decodes each one and checks that its index is the next expected one.
  Result<size_t> Drain(zmq::socket_t& socket, size_t limit) {
    size_t count = 0;
    while (count < limit) {
      Result<bool> got = path_ == Path::kBus ? ReceiveBus(socket) : ReceiveRaw(socket);
      if (!got.ok()) return got.status();
      if (!*got) break;
      ++count;
      ++next_index_;
    }
    return count;
  }

  // Waits (bounded) for one message and receives it.
  Status ReceiveOne(zmq::socket_t& socket) {
    if (!WaitFor(socket, ZMQ_POLLIN)) return DeadlineExceeded("no message within the timeout");
    DET_ASSIGN_OR_RETURN(size_t count, Drain(socket, 1));
    if (count != 1) return Internal("readable socket had no message");
    return Status::Ok();
  }

  uint64_t next_index() const { return next_index_; }

 private:
  Result<bool> ReceiveBus(zmq::socket_t& socket) {
    if (!bus::ReceiveFrames(socket, &frames_)) return false;
    Result<bus::Envelope> envelope = bus::ParseEnvelope(frames_, 0);
    if (!envelope.ok()) return envelope.status();
    Result<BenchSample> sample = envelope->Decode<BenchSample>();
    if (!sample.ok()) return sample.status();
    if (sample->index != kIndexBase + next_index_ || sample->payload.size() != payload_bytes_) {
      return Internal("decoded message " + std::to_string(sample->index - kIndexBase) + " with a " +
                      std::to_string(sample->payload.size()) + "-byte payload, expected message " +
                      std::to_string(next_index_));
    }
    return true;
  }

  Result<bool> ReceiveRaw(zmq::socket_t& socket) {
    if (!socket.recv(raw_[0], zmq::recv_flags::dontwait)) return false;
    size_t frames = 1;
    while (raw_[frames - 1].more()) {
      if (frames == raw_.size()) return Internal("raw message has too many frames");
      (void)socket.recv(raw_[frames], zmq::recv_flags::none);
      ++frames;
    }
    bool ok = frames == 1 && raw_[0].size() == wire_.body.size();
    if (path_ == Path::kRaw3) {
      ok = frames == 3 && raw_[0].size() == wire_.type.size() &&
           raw_[1].size() == wire_.header.size() && raw_[2].size() == wire_.body.size();
    }
    if (!ok) return Internal("raw message has the wrong shape");
    return true;
  }

  Path path_;
  const Wire& wire_;
  size_t payload_bytes_;
  uint64_t next_index_ = 0;
  std::vector<zmq::message_t> frames_;
  std::array<zmq::message_t, 4> raw_;
};

// A one-way PUSH/PULL pipe: the server end (PULL) binds, the client end (PUSH) connects.
struct Pipe {
  zmq::socket_t push;
  zmq::socket_t pull;
};

Result<Pipe> MakePipe(zmq::context_t& push_context, zmq::context_t& pull_context,
                      const Security& security, bool pull_binds) {
  Pipe pipe{bus::MakeSocket(push_context, zmq::socket_type::push),
            bus::MakeSocket(pull_context, zmq::socket_type::pull)};
  zmq::socket_t& bound = pull_binds ? pipe.pull : pipe.push;
  zmq::socket_t& connecting = pull_binds ? pipe.push : pipe.pull;
  DET_ASSIGN_OR_RETURN(std::string endpoint, BindLoopback(bound, security));
  DET_RETURN_IF_ERROR(bus::Connect(connecting, endpoint, security.client));
  return pipe;
}

// ---------------------------------------------------------------------------------------------
// Measurements.

struct Latency {
  double p50_us = 0;
  double p99_us = 0;
};

// p50 and p99 of `nanos`, each multiplied by `scale`, in microseconds.
Latency Percentiles(std::vector<int64_t> nanos, double scale) {
  if (nanos.empty()) return {};
  std::sort(nanos.begin(), nanos.end());
  auto at = [&](double q) {
    size_t i =
        std::min(nanos.size() - 1, static_cast<size_t>(q * static_cast<double>(nanos.size())));
    return static_cast<double>(nanos[i]) * scale / 1000.0;
  };
  return {at(0.50), at(0.99)};
}

int64_t NanosSince(SteadyTime start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
      .count();
}

// Messages/s: a sender thread sends `count` messages as fast as it can, a receiver thread drains
// them; the time runs from the first send to the last receive. `warmup` messages first go through
// untimed, so connection setup and the CURVE handshake are not measured.
Result<double> MeasureThroughput(Path path, const Security& security, size_t count, size_t warmup) {
  const Wire wire = MakeWire();
  Contexts contexts(security);
  DET_ASSIGN_OR_RETURN(Pipe pipe, MakePipe(contexts.client, contexts.server, security, true));
  Sender sender(path, wire);
  Receiver receiver(path, wire);
  for (size_t i = 0; i < warmup; ++i) {
    DET_RETURN_IF_ERROR(sender.Send(pipe.push, i));
    DET_RETURN_IF_ERROR(receiver.ReceiveOne(pipe.pull));
  }
  Status receive_status;
  SteadyTime receive_end;
  std::thread receive_thread([&] {
    size_t received = 0;
    while (received < count) {
      if (!WaitFor(pipe.pull, ZMQ_POLLIN)) {
        receive_status = DeadlineExceeded("receiver stalled after " + std::to_string(received) +
                                          " of " + std::to_string(count) + " messages");
        return;
      }
      Result<size_t> drained = receiver.Drain(pipe.pull, count - received);
      if (!drained.ok()) {
        receive_status = drained.status();
        return;
      }
      received += *drained;
    }
    receive_end = std::chrono::steady_clock::now();
  });
  const SteadyTime start = std::chrono::steady_clock::now();
  Status send_status;
  for (size_t i = 0; i < count && send_status.ok(); ++i) {
    send_status = sender.Send(pipe.push, warmup + i);
  }
  receive_thread.join();
  DET_RETURN_IF_ERROR(send_status);
  DET_RETURN_IF_ERROR(receive_status);
  DET_RETURN_IF_ERROR(contexts.CheckCurveUsed());
  const double seconds = std::chrono::duration<double>(receive_end - start).count();
  return static_cast<double>(count) / seconds;
}

// Round trips of a ping-pong over two PUSH/PULL pipes: the client sends message i, the server's
// echo thread receives it and sends message i back by the same path (the bus path decodes and
// re-encodes it), the client receives it. One message in flight at a time.
Result<std::vector<int64_t>> MeasureRoundTrips(Path path, const Security& security, size_t samples,
                                               size_t warmup) {
  const Wire wire = MakeWire();
  Contexts contexts(security);
  DET_ASSIGN_OR_RETURN(Pipe ping, MakePipe(contexts.client, contexts.server, security, true));
  DET_ASSIGN_OR_RETURN(Pipe pong, MakePipe(contexts.server, contexts.client, security, false));
  const size_t total = warmup + samples;
  Status echo_status;
  std::thread echo_thread([&] {
    Sender sender(path, wire);
    Receiver receiver(path, wire);
    for (size_t i = 0; i < total && echo_status.ok(); ++i) {
      echo_status = receiver.ReceiveOne(ping.pull);
      if (echo_status.ok()) echo_status = sender.Send(pong.push, i);
    }
  });
  Sender sender(path, wire);
  Receiver receiver(path, wire);
  std::vector<int64_t> round_trips;
  round_trips.reserve(samples);
  Status status;
  for (size_t i = 0; i < total && status.ok(); ++i) {
    const SteadyTime start = std::chrono::steady_clock::now();
    status = sender.Send(ping.push, i);
    if (status.ok()) status = receiver.ReceiveOne(pong.pull);
    if (status.ok() && i >= warmup) round_trips.push_back(NanosSince(start));
  }
  echo_thread.join();
  DET_RETURN_IF_ERROR(status.WithContext("ping-pong client"));
  DET_RETURN_IF_ERROR(echo_status.WithContext("ping-pong echo"));
  DET_RETURN_IF_ERROR(contexts.CheckCurveUsed());
  return round_trips;
}

// One timed series of gateway calls.
struct CallTimes {
  std::vector<int64_t> round_trips;
  double calls_per_s = 0;
};

// Runs `serve(stop)` on a server thread while `call(i)` is timed `calls` times (after `warmup`
// untimed calls) on this one.
template <class Serve, class Call>
Result<CallTimes> TimeCalls(size_t calls, size_t warmup, Serve serve, Call call) {
  std::atomic<bool> stop{false};
  Status serve_status;
  std::thread server_thread([&] { serve_status = serve(stop); });
  Status status;
  for (size_t i = 0; i < warmup && status.ok(); ++i) status = call(i);
  std::vector<int64_t> round_trips;
  round_trips.reserve(calls);
  const SteadyTime start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < calls && status.ok(); ++i) {
    const SteadyTime call_start = std::chrono::steady_clock::now();
    status = call(warmup + i);
    round_trips.push_back(NanosSince(call_start));
  }
  const int64_t total = NanosSince(start);
  stop = true;
  server_thread.join();
  DET_RETURN_IF_ERROR(status.WithContext("gateway client"));
  DET_RETURN_IF_ERROR(serve_status.WithContext("gateway server"));
  const double calls_per_s =
      static_cast<double>(round_trips.size()) * 1e9 / static_cast<double>(total);
  return CallTimes{std::move(round_trips), calls_per_s};
}

// The gateway: RpcServer polled on a server thread with an echo handler, RpcClient::CallRaw here.
Result<CallTimes> MeasureBusGateway(const Security& security, size_t calls, size_t warmup) {
  Contexts contexts(security);
  bus::RpcServer server(contexts.server, "bench-gateway", RealClock::Instance());
  server.HandleRaw(std::string(kEchoMethod),
                   [](const bus::RpcContext&, const bus::Bytes& params) -> Result<std::string> {
                     return params.data;
                   });
  DET_ASSIGN_OR_RETURN(std::string endpoint, server.Bind(kLoopback, security.server));
  bus::RpcClient client(contexts.client, endpoint, security.client);
  const bus::Bytes params{bus::Encode(MakeSample(0))};
  auto serve = [&](const std::atomic<bool>& stop) {
    while (!stop) {
      zmq::pollitem_t item{server.socket().handle(), 0, ZMQ_POLLIN, 0};
      bus::Poll(&item, 1, std::chrono::milliseconds(20));
      if (item.revents & ZMQ_POLLIN) server.Receive();
    }
    return Status::Ok();
  };
  auto call = [&](size_t) -> Status {
    Result<bus::Bytes> reply = client.CallRaw(std::string(kEchoMethod), params, "");
    if (!reply.ok()) return reply.status();
    if (reply->data != params.data) return Internal("gateway echoed different bytes");
    return Status::Ok();
  };
  DET_ASSIGN_OR_RETURN(CallTimes times, TimeCalls(calls, warmup, serve, call));
  DET_RETURN_IF_ERROR(contexts.CheckCurveUsed());
  return times;
}

// What the gateway puts on the wire for one call, encoded once.
struct RpcWire {
  Wire request;
  Wire reply;
};

RpcWire MakeRpcWire() {
  const std::string params = bus::Encode(MakeSample(0));
  const std::string id = bus::RandomId();
  const bus::RpcRequest request{id, "", std::string(kEchoMethod), bus::Bytes{params}};
  const bus::RpcReply reply{id, 0, "", bus::Bytes{params}};
  Header request_header;
  request_header.sender = "det";  // what RpcClient sends
  const Header reply_header = bus::MakeHeader("bench-gateway", 0, 0, RealClock::Instance());
  return RpcWire{
      {std::string(bus::RpcRequest::kType), EncodeHeader(request_header), bus::Encode(request)},
      {std::string(bus::RpcReply::kType), EncodeHeader(reply_header), bus::Encode(reply)}};
}

void SendWire(zmq::socket_t& socket, const Wire& wire) {
  socket.send(zmq::buffer(wire.type), zmq::send_flags::sndmore);
  socket.send(zmq::buffer(wire.header), zmq::send_flags::sndmore);
  socket.send(zmq::buffer(wire.body), zmq::send_flags::none);
}

// Receives one whole message (blocking, bounded by the socket's receive timeout) and checks that
// it has wire's shape.
Status ReceiveWire(zmq::socket_t& socket, const Wire& wire) {
  std::array<zmq::message_t, 3> frames;
  size_t count = 0;
  bool more = true;
  while (more) {
    zmq::message_t& frame = frames[std::min(count, frames.size() - 1)];
    if (!socket.recv(frame, zmq::recv_flags::none)) return DeadlineExceeded("no reply");
    more = frame.more();
    ++count;
  }
  if (count != 3 || frames[0].size() != wire.type.size() ||
      frames[1].size() != wire.header.size() || frames[2].size() != wire.body.size()) {
    return Internal("raw REQ/REP message has the wrong shape");
  }
  return Status::Ok();
}

// The baseline: raw REP (polled on a server thread) and REQ, exchanging the gateway's bytes.
Result<CallTimes> MeasureRawGateway(const Security& security, size_t calls, size_t warmup) {
  const RpcWire wire = MakeRpcWire();
  Contexts contexts(security);
  zmq::socket_t rep = bus::MakeSocket(contexts.server, zmq::socket_type::rep);
  zmq::socket_t req = bus::MakeSocket(contexts.client, zmq::socket_type::req);
  req.set(zmq::sockopt::rcvtimeo,
          static_cast<int>(std::chrono::milliseconds(kStallTimeout).count()));
  DET_ASSIGN_OR_RETURN(std::string endpoint, BindLoopback(rep, security));
  DET_RETURN_IF_ERROR(bus::Connect(req, endpoint, security.client));
  auto serve = [&](const std::atomic<bool>& stop) -> Status {
    while (!stop) {
      zmq::pollitem_t item{rep.handle(), 0, ZMQ_POLLIN, 0};
      bus::Poll(&item, 1, std::chrono::milliseconds(20));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      DET_RETURN_IF_ERROR(ReceiveWire(rep, wire.request));
      SendWire(rep, wire.reply);
    }
    return Status::Ok();
  };
  auto call = [&](size_t) -> Status {
    SendWire(req, wire.request);
    return ReceiveWire(req, wire.reply);
  };
  DET_ASSIGN_OR_RETURN(CallTimes times, TimeCalls(calls, warmup, serve, call));
  DET_RETURN_IF_ERROR(contexts.CheckCurveUsed());
  return times;
}

// ---------------------------------------------------------------------------------------------
// The run and its table.

// Counts are per path and per round; each path gets `rounds` rounds.
struct Options {
  bool short_mode = false;
  size_t rounds = 5;
  size_t throughput_messages = 200'000;
  size_t latency_samples = 4'000;
  size_t rpc_calls = 4'000;
  size_t warmup = 1'000;
};

Options ShortOptions() { return Options{true, 2, 10'000, 500, 500, 100}; }

// A figure's measurements over all rounds of one path.
struct Series {
  std::vector<double> rates;         // one per round: messages/s or calls/s
  std::vector<int64_t> round_trips;  // all rounds' round trips, nanoseconds
  double MedianRate() const {
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    return sorted.empty() ? 0 : sorted[sorted.size() / 2];
  }
  void Add(std::vector<int64_t> more) {
    round_trips.insert(round_trips.end(), more.begin(), more.end());
  }
};

// One configuration's figures: the bus and its baselines.
struct Figures {
  double bus_rate = 0, raw3_rate = 0, raw1_rate = 0;
  Latency bus_latency, raw3_latency, raw1_latency;  // one way: half the round trip
  double bus_calls = 0, raw_calls = 0;
  Latency bus_call, raw_call;  // whole round trip
};

// Runs `measure(path_index)` for paths 0..count-1 in an order that rotates with `round`, so that
// a slow spell of a shared machine does not always land on the same path.
template <class Measure>
Status Rotate(size_t round, size_t count, Measure measure) {
  for (size_t k = 0; k < count; ++k) DET_RETURN_IF_ERROR(measure((round + k) % count));
  return Status::Ok();
}

Result<Figures> MeasureAll(const Options& options, bool curve) {
  DET_ASSIGN_OR_RETURN(Security security, MakeSecurity(curve));
  constexpr Path kPaths[] = {Path::kRaw3, Path::kBus, Path::kRaw1};
  Series pipes[3];
  Series latencies[3];
  Series gateways[2];  // raw, bus
  const size_t w = options.warmup;
  for (size_t round = 0; round < options.rounds; ++round) {
    DET_RETURN_IF_ERROR(Rotate(round, 3, [&](size_t p) -> Status {
      DET_ASSIGN_OR_RETURN(double rate,
                           MeasureThroughput(kPaths[p], security, options.throughput_messages, w));
      pipes[p].rates.push_back(rate);
      return Status::Ok();
    }));
    DET_RETURN_IF_ERROR(Rotate(round, 3, [&](size_t p) -> Status {
      DET_ASSIGN_OR_RETURN(auto trips,
                           MeasureRoundTrips(kPaths[p], security, options.latency_samples, w));
      latencies[p].Add(std::move(trips));
      return Status::Ok();
    }));
    DET_RETURN_IF_ERROR(Rotate(round, 2, [&](size_t g) -> Status {
      DET_ASSIGN_OR_RETURN(CallTimes times,
                           g == 0 ? MeasureRawGateway(security, options.rpc_calls, w)
                                  : MeasureBusGateway(security, options.rpc_calls, w));
      gateways[g].rates.push_back(times.calls_per_s);
      gateways[g].Add(std::move(times.round_trips));
      return Status::Ok();
    }));
  }
  Figures f;
  f.raw3_rate = pipes[0].MedianRate();
  f.bus_rate = pipes[1].MedianRate();
  f.raw1_rate = pipes[2].MedianRate();
  f.raw3_latency = Percentiles(std::move(latencies[0].round_trips), 0.5);
  f.bus_latency = Percentiles(std::move(latencies[1].round_trips), 0.5);
  f.raw1_latency = Percentiles(std::move(latencies[2].round_trips), 0.5);
  f.raw_calls = gateways[0].MedianRate();
  f.bus_calls = gateways[1].MedianRate();
  f.raw_call = Percentiles(std::move(gateways[0].round_trips), 1.0);
  f.bus_call = Percentiles(std::move(gateways[1].round_trips), 1.0);
  return f;
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string Rate(double per_s) {
  return per_s >= 1e6 ? Format("%.2f M/s", per_s / 1e6) : Format("%.1f k/s", per_s / 1e3);
}
std::string Micros(double us) { return Format("%.1f us", us); }
std::string Ratio(double b, double a) { return a > 0 ? Format("%.2f", b / a) : "-"; }

void Row(const std::string& figure, const std::string& bus, const std::string& a,
         const std::string& ratio_a, const std::string& a1, const std::string& ratio_a1,
         const std::string& goal) {
  std::printf("%-30s %12s %12s %6s %12s %6s  %s\n", figure.c_str(), bus.c_str(), a.c_str(),
              ratio_a.c_str(), a1.c_str(), ratio_a1.c_str(), goal.c_str());
}

void PrintPipeRows(const std::string& mode, const Figures& f) {
  const bool met = f.raw3_rate > 0 && f.bus_rate / f.raw3_rate >= 0.8;
  Row(mode + " throughput", Rate(f.bus_rate), Rate(f.raw3_rate), Ratio(f.bus_rate, f.raw3_rate),
      Rate(f.raw1_rate), Ratio(f.bus_rate, f.raw1_rate),
      std::string("b/a >= 0.8: ") + (met ? "met" : "MISSED"));
  Row(mode + " latency p50 (RTT/2)", Micros(f.bus_latency.p50_us), Micros(f.raw3_latency.p50_us),
      Ratio(f.bus_latency.p50_us, f.raw3_latency.p50_us), Micros(f.raw1_latency.p50_us),
      Ratio(f.bus_latency.p50_us, f.raw1_latency.p50_us), "");
  Row(mode + " latency p99 (RTT/2)", Micros(f.bus_latency.p99_us), Micros(f.raw3_latency.p99_us),
      Ratio(f.bus_latency.p99_us, f.raw3_latency.p99_us), Micros(f.raw1_latency.p99_us),
      Ratio(f.bus_latency.p99_us, f.raw1_latency.p99_us), "");
}

void PrintGatewayRows(const std::string& mode, const Figures& f) {
  const bool met = f.bus_call.p99_us < 1000.0;
  Row(mode + " gateway calls", Rate(f.bus_calls), Rate(f.raw_calls),
      Ratio(f.bus_calls, f.raw_calls), "", "", "");
  Row(mode + " gateway p50 round trip", Micros(f.bus_call.p50_us), Micros(f.raw_call.p50_us),
      Ratio(f.bus_call.p50_us, f.raw_call.p50_us), "", "", "");
  Row(mode + " gateway p99 round trip", Micros(f.bus_call.p99_us), Micros(f.raw_call.p99_us),
      Ratio(f.bus_call.p99_us, f.raw_call.p99_us), "", "",
      std::string("p99 < 1 ms: ") + (met ? "met" : "MISSED"));
}

void PrintTable(const Options& options, const Figures& plain, const Figures& curve) {
  const Wire wire = MakeWire();
  std::printf("\nbus frames per message: type %zu + header %zu + body %zu = %zu bytes\n",
              wire.type.size(), wire.header.size(), wire.body.size(),
              wire.type.size() + wire.header.size() + wire.body.size());
  std::printf(
      "b = bus typed path, a = raw PUSH/PULL with the bus's 3 frames, a' = raw 1 frame of "
      "%zu bytes\n\n",
      wire.body.size());
  Row("pipe (PUSH/PULL)", "bus (b)", "raw 3f (a)", "b/a", "raw 1f (a')", "b/a'", "goal");
  PrintPipeRows("plain", plain);
  PrintPipeRows("curve", curve);
  std::printf("\n");
  Row("gateway (REQ -> ROUTER)", "bus (b)", "REQ/REP (a)", "b/a", "", "", "goal");
  PrintGatewayRows("plain", plain);
  PrintGatewayRows("curve", curve);
}

int Run(const Options& options) {
  const SteadyTime start = std::chrono::steady_clock::now();
  std::printf(
      "bus_bench (%s), TCP loopback: per path and round %zu messages (throughput), %zu "
      "ping-pongs, %zu gateway calls, each after %zu untimed; %zu rounds, paths "
      "interleaved\n",
      options.short_mode ? "short" : "full", options.throughput_messages, options.latency_samples,
      options.rpc_calls, options.warmup, options.rounds);
  std::fflush(stdout);
  Result<Figures> plain = MeasureAll(options, false);
  if (!plain.ok()) {
    std::fprintf(stderr, "bus_bench: plaintext run failed: %s\n",
                 plain.status().ToString().c_str());
    return 1;
  }
  Result<Figures> curve = MeasureAll(options, true);
  if (!curve.ok()) {
    std::fprintf(stderr, "bus_bench: CURVE run failed: %s\n", curve.status().ToString().c_str());
    return 1;
  }
  PrintTable(options, *plain, *curve);
  std::printf("\nratios: b/a < 1 means the bus is slower for throughput, > 1 slower for latency\n");
  std::printf("total wall time %.1f s\n", static_cast<double>(NanosSince(start)) / 1e9);
  return 0;
}

}  // namespace
}  // namespace det::bench

int main(int argc, char** argv) {
  det::bench::Options options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--short") == 0) {
      options = det::bench::ShortOptions();
    } else {
      std::fprintf(stderr, "usage: %s [--short]\n", argv[0]);
      return 2;
    }
  }
  return det::bench::Run(options);
}
