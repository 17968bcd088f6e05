#include <gtest/gtest.h>

#include "storage/ingest_writer.h"

namespace det::storage {
namespace {

TEST(ValidUtf8Test, KeepsValidTextAndReplacesWhatPostgresWouldRefuse) {
  EXPECT_EQ(ValidUtf8("plain ascii"), "plain ascii");
  EXPECT_EQ(ValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(ValidUtf8(std::string("a\0b", 3)), "a" + fffd + "b");  // NUL
  EXPECT_EQ(ValidUtf8("\xFF"), fffd);                              // not a lead byte
  EXPECT_EQ(ValidUtf8("\xE2\x82"), fffd + fffd);                   // cut short
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), fffd + fffd);                   // overlong '/'
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), fffd + fffd + fffd);        // a surrogate
  EXPECT_EQ(ValidUtf8("x\xC3"), "x" + fffd);                       // split at the end
}

}  // namespace
}  // namespace det::storage
