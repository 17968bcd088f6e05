#include "bus/envelope.h"

#include <gtest/gtest.h>

#include "bus/catalog/agent.h"

namespace det::bus {
namespace {

std::vector<zmq::message_t> Frames(std::vector<std::string> parts) {
  std::vector<zmq::message_t> frames;
  for (auto& p : parts) frames.emplace_back(p.data(), p.size());
  return frames;
}

TEST(EnvelopeTest, ParsesAWellFormedEnvelope) {
  auto frames = Frames(
      {"agent.echo", Encode(Header{kProtocolVersion, "a1", 3, 9, 1}), Encode(AgentEcho{"x"})});
  auto envelope = ParseEnvelope(frames, 0);
  ASSERT_TRUE(envelope.ok()) << envelope.status().ToString();
  EXPECT_EQ(envelope->header.sender, "a1");
  EXPECT_EQ(envelope->header.seq, 9u);
  EXPECT_EQ(envelope->Decode<AgentEcho>()->nonce, "x");
  EXPECT_FALSE(envelope->Decode<AgentPing>().ok());  // wrong type for the body
}

TEST(EnvelopeTest, WrongPartCountIsNamed) {
  auto frames = Frames({"agent.echo", "x"});
  auto envelope = ParseEnvelope(frames, 0);
  ASSERT_FALSE(envelope.ok());
  EXPECT_EQ(envelope.status().message(), "expected 3 frames, got 2");
}

TEST(EnvelopeTest, BadTypeIsRefused) {
  auto frames = Frames({std::string("\x01\x02", 2), Encode(Header{}), Encode(AgentEcho{"x"})});
  EXPECT_FALSE(ParseEnvelope(frames, 0).ok());
  frames = Frames({std::string(65, 'a'), Encode(Header{}), Encode(AgentEcho{"x"})});
  EXPECT_FALSE(ParseEnvelope(frames, 0).ok());
}

TEST(EnvelopeTest, GarbageHeaderIsRefused) {
  auto frames = Frames({"agent.echo", "\xc1\xc1", Encode(AgentEcho{"x"})});
  auto envelope = ParseEnvelope(frames, 0);
  ASSERT_FALSE(envelope.ok());
  EXPECT_NE(envelope.status().message().find("agent.echo: header"), std::string::npos);
}

TEST(EnvelopeTest, OtherProtocolVersionIsRefusedWithBothVersions) {
  Header header;
  header.version = 99;
  auto frames = Frames({"agent.echo", Encode(header), Encode(AgentEcho{"x"})});
  auto envelope = ParseEnvelope(frames, 0);
  ASSERT_FALSE(envelope.ok());
  EXPECT_EQ(envelope.status().message(), "agent.echo: protocol version 99, this build speaks 1");
}

}  // namespace
}  // namespace det::bus
