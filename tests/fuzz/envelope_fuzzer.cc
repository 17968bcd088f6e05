// libFuzzer target for every decoder of untrusted bus bytes: the envelope (part count, type,
// header) and every catalog message body. Input: frames separated by the byte pair 0xFF 0x00.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bus/catalog/agent.h"
#include "bus/catalog/channel.h"
#include "bus/catalog/master.h"
#include "bus/catalog/rpc.h"
#include "bus/catalog/snapshot.h"
#include "bus/envelope.h"

namespace {

template <det::bus::Message... M>
void DecodeAll(std::string_view body) {
  (static_cast<void>(det::bus::Decode<M>(body)), ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<zmq::message_t> frames;
  size_t start = 0;
  while (frames.size() < 6) {
    size_t split = input.find(std::string_view("\xff\x00", 2), start);
    std::string_view part =
        input.substr(start, split == std::string_view::npos ? split : split - start);
    frames.emplace_back(part.data(), part.size());
    if (split == std::string_view::npos) break;
    start = split + 2;
  }
  auto envelope = det::bus::ParseEnvelope(frames, 0);
  (void)envelope;
  using namespace det::bus;
  DecodeAll<ChannelHello, ChannelWelcome, ChannelRejoin, ChannelHeartbeat, ChannelAck,
            SnapshotRequest, SnapshotReply, BrokerBeacon, RpcRequest, RpcReply, AgentRegister,
            AgentPing, AgentEcho, AgentStateEvent, MasterInfo, AgentList>(input);
  (void)Decode<Header>(input);
  return 0;
}
