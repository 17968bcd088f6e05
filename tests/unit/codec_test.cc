#include "bus/codec.h"

#include <gtest/gtest.h>

#include "bus/catalog/agent.h"
#include "bus/catalog/channel.h"
#include "bus/catalog/master.h"
#include "bus/catalog/rpc.h"
#include "bus/catalog/snapshot.h"
#include "bus/envelope.h"

namespace det::bus {
namespace {

template <Message M>
void ExpectRoundTrip(const M& original) {
  auto decoded = Decode<M>(Encode(original));
  ASSERT_TRUE(decoded.ok()) << M::kType << ": " << decoded.status().ToString();
  EXPECT_EQ(*decoded, original) << M::kType;
}

Header SampleHeader() {
  return {kProtocolVersion, "master", 42, 7, 1767225600000000000, "agent/a1", true};
}

TEST(CodecTest, EveryCatalogMessageRoundTrips) {
  ExpectRoundTrip(ChannelHello{"agent-1"});
  ExpectRoundTrip(ChannelWelcome{1000});
  ExpectRoundTrip(ChannelRejoin{"no session"});
  ExpectRoundTrip(ChannelHeartbeat{});
  ExpectRoundTrip(ChannelAck{{1, 2, 18446744073709551615ull}});
  ExpectRoundTrip(SnapshotRequest{{"agent.", "cluster."}});
  ExpectRoundTrip(
      SnapshotReply{9,
                    {{"agent.state", SampleHeader(), Bytes{std::string("\x00\x01", 2)}}},
                    {{"master", 42, "agent.state", 7}}});
  ExpectRoundTrip(BrokerBeacon{});
  ExpectRoundTrip(RpcRequest{"id", "token", "agent.list", Bytes{"params"}});
  ExpectRoundTrip(RpcReply{"id", 5, "not found", Bytes{"body"}});
  ExpectRoundTrip(AgentRegister{"0.1.0", "gpu", "host", {{"0", "cuda", "A100"}, {"1", "cpu", ""}}});
  ExpectRoundTrip(AgentPing{"n"});
  ExpectRoundTrip(AgentEcho{"n"});
  ExpectRoundTrip(AgentStateEvent{"a1", "lost", "default", 8});
  ExpectRoundTrip(MasterInfoRequest{});
  ExpectRoundTrip(MasterInfo{"0.1.0", "c", "m", -5});
  ExpectRoundTrip(AgentListRequest{});
  ExpectRoundTrip(
      AgentList{{{"a1", "connected", "default", "h", "0.1.0", {{"0", "cpu", "x"}}, 12}}});
}

TEST(CodecTest, HeaderRoundTrips) {
  auto decoded = Decode<Header>(Encode(SampleHeader()));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, SampleHeader());
}

TEST(CodecTest, DefaultValuedOmitDefaultFieldsAreLeftOutAndReadBack) {
  Header plain{kProtocolVersion, "a1", 1, 2, 3, "", false};
  std::string bytes = Encode(plain);
  EXPECT_EQ(bytes.find("tombstone"), std::string::npos);
  EXPECT_EQ(bytes.find("key"), std::string::npos);
  EXPECT_EQ(*Decode<Header>(bytes), plain);
  EXPECT_NE(Encode(SampleHeader()).find("tombstone"), std::string::npos);
}

// A newer sender's message with a field this build does not know.
struct AgentEchoV2 {
  std::string nonce;
  int64_t added_later = 0;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("nonce", s.nonce, kRequired);
    v("added_later", s.added_later);
  }
};

// Older and odd senders, for compatibility and error tests.
struct Old {
  std::string version;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("version", s.version);
  }
};
struct Bad {
  std::string version = "1";
  std::vector<std::map<std::string, int>> slots{{{"id", 3}, {"type", 4}}};
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("version", s.version);
    v("slots", s.slots);
  }
};
struct Big {
  int64_t heartbeat_interval_ms = 0;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("heartbeat_interval_ms", s.heartbeat_interval_ms);
  }
};
struct Narrow {
  int8_t heartbeat_interval_ms = 0;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("heartbeat_interval_ms", s.heartbeat_interval_ms);
  }
};

TEST(CodecTest, UnknownFieldIsIgnoredByOlderReader) {
  auto decoded = Decode<AgentEcho>(Encode(AgentEchoV2{"abc", 99}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->nonce, "abc");
}

TEST(CodecTest, MissingOptionalFieldTakesItsDefault) {
  auto decoded = Decode<AgentRegister>(Encode(Old{"0.0.9"}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->version, "0.0.9");
  EXPECT_EQ(decoded->resource_pool, "");
  EXPECT_TRUE(decoded->slots.empty());
}

TEST(CodecTest, MissingRequiredFieldIsNamed) {
  auto decoded = Decode<AgentEcho>(Encode(ChannelHeartbeat{}));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "agent.echo: field nonce: required but missing");
}

TEST(CodecTest, WrongFieldTypeIsNamedWithItsPath) {
  auto decoded = Decode<AgentRegister>(Encode(Bad{}));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "agent.register: field slots[0].id: expected a string, got an unsigned integer");
}

TEST(CodecTest, OutOfRangeIntegerIsRefused) {
  auto decoded = Decode<Narrow>(Encode(Big{1000}));
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("out of range"), std::string::npos);
}

TEST(CodecTest, TruncatedInputIsAnError) {
  std::string bytes = Encode(AgentRegister{"0.1.0", "pool", "host", {{"0", "cpu", "x"}}});
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto decoded = Decode<AgentRegister>(std::string_view(bytes).substr(0, n));
    EXPECT_FALSE(decoded.ok()) << "prefix of " << n << " bytes decoded";
  }
}

TEST(CodecTest, GarbageAndNonMapBodiesAreErrors) {
  for (std::string garbage :
       {std::string("\xc1"), std::string("\x93\x01\x02\x03"), std::string("hello"),
        std::string("\x81\xa1k\xc1", 4), std::string("\x80\x80", 2)}) {
    auto decoded = Decode<AgentEcho>(garbage);
    EXPECT_FALSE(decoded.ok()) << Printable(garbage);
  }
}

TEST(CodecTest, DeepNestingIsRefusedNotRecursedInto) {
  std::string deep(100000, '\x91');  // a list inside a list inside ...
  deep += '\x01';
  auto decoded = Decode<AgentEcho>(deep);
  ASSERT_FALSE(decoded.ok());
}

}  // namespace
}  // namespace det::bus
