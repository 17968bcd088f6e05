#pragma once

// An object's bytes as an HTTP body, for the storage fakes (fake_s3, fake_gcs): served from an
// open file through httplib's content provider, so a body is never held in memory and never
// compressed (httplib gzips a set_content body of a text type when the client accepts it, and
// the CLIs read media raw), and a Range header is answered 206 with Content-Range by httplib.

#include <fcntl.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

namespace det::testing {

// An open file that closes itself when the last copy goes (a response's body outlives the
// handler). Holds -1 if the file could not be opened.
using SharedFd = std::shared_ptr<int>;
inline SharedFd OpenShared(const std::filesystem::path& file) {
  return SharedFd(new int(::open(file.c_str(), O_RDONLY | O_CLOEXEC)), [](int* fd) {
    if (*fd >= 0) ::close(*fd);
    delete fd;
  });
}

// Serves `size` bytes of `fd` (opened while the object was current, so a replacement or removal
// meanwhile does not change them); httplib answers a Range header with 206 and Content-Range.
// Leave response.status unset: set to 200, a ranged answer would keep 200.
inline void ServeFile(httplib::Response& response, const SharedFd& fd, uint64_t size,
                      const std::string& content_type) {
  if (size == 0) {
    response.set_content("", content_type);
    return;
  }
  response.set_content_provider(
      size, content_type, [fd](size_t offset, size_t length, httplib::DataSink& sink) {
        char buffer[1 << 16];
        while (length > 0) {
          const ssize_t got =
              ::pread(*fd, buffer, std::min(length, sizeof(buffer)), static_cast<off_t>(offset));
          if (got <= 0) return false;
          if (!sink.write(buffer, static_cast<size_t>(got))) return false;
          offset += static_cast<size_t>(got);
          length -= static_cast<size_t>(got);
        }
        return true;
      });
}

// S3 and Cloud Storage apply a Range header to an object's bytes only: an error is answered whole
// (its XML or JSON document). httplib would cut any answer to the Range after the handler: a 400
// to its first bytes, or a 416 past them, which a client takes for the end of the object. Called
// when the handler is done: a request answered with an error then has no ranges to apply.
inline void ApplyRangesOnlyToObjects(const httplib::Request& request,
                                     const httplib::Response& response) {
  // The request is httplib's own (not a const object), handed to handlers as const.
  if (response.status >= 300) const_cast<httplib::Request&>(request).ranges.clear();
}

}  // namespace det::testing
