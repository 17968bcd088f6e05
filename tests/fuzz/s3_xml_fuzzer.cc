// libFuzzer target for S3's XML answers as the S3 client reads them: ListObjectsV2 pages (keys
// url-encoded or not, continuation tokens), DeleteObjects results (per-key errors) and error
// documents, each reader given the whole input. Bad answers must come back as errors: a crash, a
// sanitizer report or an exception that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "object_store/s3_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  using namespace det::object_store;
  auto page = ReadListObjectsV2(body);
  if (!page.ok()) (void)page.error().ToString();
  auto deleted = ReadDeleteResult(body);
  if (!deleted.ok()) (void)deleted.error().ToString();
  (void)ReadS3Error("DeleteObjects", body.size() % 2 == 0 ? 403 : 503, body, {}).ToString();
  return 0;
}
