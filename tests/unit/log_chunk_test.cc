#include "storage/log_chunk.h"

#include <gtest/gtest.h>

namespace det::storage {
namespace {

LogLine Line(int64_t ns, std::string stdtype, std::string text, std::optional<int64_t> offset,
             std::string level = "INFO") {
  LogLine line;
  line.timestamp_ns = ns;
  line.stdtype = std::move(stdtype);
  line.log = std::move(text);
  line.source_offset = offset;
  line.level = std::move(level);
  return line;
}

TEST(LogChunkTest, LinesComeBackAsTheyWentInWithTheirOffsetsLevelsAndNanoseconds) {
  const std::vector<LogLine> lines = {
      Line(1767225600123456789, "stdout", "first", 0),
      Line(1767225600123456000, "stderr", "earlier than the line before", 0, "ERROR"),
      Line(1767225601000000000, "stdout", "", 6),                           // an empty line
      Line(1767225601000000001, "stdout", "skipped ahead", 500, "NOTICE"),  // a named level
      Line(1767225601000000002, "stdout", "from the master", std::nullopt, "WARNING"),
      Line(-5, "stdout", std::string("bytes \0\xff kept", 14), 514),
  };
  auto decoded = DecodeLogChunk(ChunkCodec::kDeflate, EncodeLogChunk(lines));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ((*decoded)[i].timestamp_ns, lines[i].timestamp_ns) << i;
    EXPECT_EQ((*decoded)[i].stdtype, lines[i].stdtype) << i;
    EXPECT_EQ((*decoded)[i].log, lines[i].log) << i;
    EXPECT_EQ((*decoded)[i].source_offset, lines[i].source_offset) << i;
    EXPECT_EQ((*decoded)[i].level, lines[i].level) << i;
  }
}

TEST(LogChunkTest, AThousandShortLinesTakeAFewBytesEach) {
  std::vector<LogLine> lines;
  int64_t offset = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string text = std::to_string(1000000 + i);
    lines.push_back(Line(1767225600000000000 + i * 731, "stdout", text, offset));
    offset += static_cast<int64_t>(text.size()) + 1;
  }
  EXPECT_LT(EncodeLogChunk(lines).size(), 6000u);
}

TEST(LogChunkTest, DamagedDataIsAnErrorNotACrash) {
  const std::vector<LogLine> one = {Line(1, "stdout", "some text", 0)};
  std::string data = EncodeLogChunk(one);
  EXPECT_FALSE(DecodeLogChunk(ChunkCodec::kDeflate, data.substr(0, data.size() / 2)).ok());
  EXPECT_FALSE(DecodeLogChunk(ChunkCodec::kDeflate, "not deflate").ok());
  EXPECT_FALSE(DecodeLogChunk(ChunkCodec::kJson, "{").ok());
  EXPECT_FALSE(DecodeLogChunk(ChunkCodec::kJson, R"([[1, "INFO"]])").ok());
  EXPECT_FALSE(DecodeLogChunk(static_cast<ChunkCodec>(9), "").ok());
  auto json = DecodeLogChunk(
      ChunkCodec::kJson, R"([[5, "INFO", "stdout", "x", 12], [6, "ERROR", "stderr", "y", null]])");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->at(0).source_offset, 12);
  EXPECT_FALSE(json->at(1).source_offset.has_value());
}

}  // namespace
}  // namespace det::storage
