// libFuzzer target for the bucket answers the object-store clients read: S3's XML
// (ListObjectsV2 pages with keys url-encoded or not, DeleteObjects results with per-key errors,
// error documents) and GCS's JSON (objects.list pages, Google error documents), each reader given
// the whole input. Bad answers must come back as errors: a crash, a sanitizer report or an
// exception that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "object_store/gcs_client.h"
#include "object_store/s3_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  using namespace det::object_store;
  auto page = ReadListObjectsV2(body);
  if (!page.ok()) (void)page.error().ToString();
  auto deleted = ReadDeleteResult(body);
  if (!deleted.ok()) (void)deleted.error().ToString();
  (void)ReadS3Error("DeleteObjects", body.size() % 2 == 0 ? 403 : 503, body, {}).ToString();
  auto gcs_page = ReadGcsListPage(body);
  if (!gcs_page.ok()) (void)gcs_page.error().ToString();
  (void)ReadGcsError("objects.delete", body.size() % 2 == 0 ? 403 : 503, body).ToString();
  return 0;
}
