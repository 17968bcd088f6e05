#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <regex>

#include "common/http_client.h"
#include "tests/fakes/fake_gcs_wire.h"

// The fake Cloud Storage's uploads (objects.insert): uploadType=media, multipart (streamed
// through a multipart/related reader) and resumable (a session, then PUTs of its bytes).

namespace det::testing {
// Qualified: in a unity batch, fake_s3*.cc's `using namespace s3wire` reaches this file too.
namespace wire = gcswire;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kMaxOpenSessions = 1000;     // more: 429 rateLimitExceeded
constexpr size_t kMaxFinishedSessions = 256;  // kept to answer a finished session's status query
constexpr size_t kMaxHeaderBytes = 64 << 10;  // a multipart body's preamble or a part's headers

// A multipart/related body read as it streams in: each part's headers, then its bytes handed to
// a sink as they come. Delimiter lines end in LF (gcloud) or CRLF (python-storage); a part's
// bytes end before the line break that precedes the next delimiter.
class MultipartReader {
 public:
  // Bytes of part `part` (0 first) with its headers (lower-case names); false stops the read.
  using Sink = std::function<bool(int part, const std::map<std::string, std::string>& headers,
                                  const char* data, size_t size)>;
  explicit MultipartReader(const std::string& boundary) : delimiter_("--" + boundary) {}

  // False when the body is malformed or the sink refused.
  bool Feed(const char* data, size_t size, const Sink& sink) {
    buffer_.append(data, size);
    while (true) {
      switch (state_) {
        case State::kPreamble: {
          const size_t at = buffer_.find(delimiter_);
          if (at == std::string::npos) return buffer_.size() < kMaxHeaderBytes;
          buffer_.erase(0, at + delimiter_.size());
          state_ = State::kAfterDelimiter;
          break;
        }
        case State::kAfterDelimiter: {
          if (buffer_.size() < 2) return true;
          if (buffer_.compare(0, 2, "--") == 0) {
            state_ = State::kDone;
            break;
          }
          const size_t eol = buffer_.find('\n');
          if (eol == std::string::npos) return buffer_.size() < kMaxHeaderBytes;
          crlf_ = eol > 0 && buffer_[eol - 1] == '\r';
          buffer_.erase(0, eol + 1);
          headers_.clear();
          state_ = State::kHeaders;
          break;
        }
        case State::kHeaders: {
          const size_t eol = buffer_.find('\n');
          if (eol == std::string::npos) return buffer_.size() < kMaxHeaderBytes;
          std::string line = buffer_.substr(0, eol);
          buffer_.erase(0, eol + 1);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          if (line.empty()) {
            ++part_;
            state_ = State::kBody;
            break;
          }
          const size_t colon = line.find(':');
          if (colon == std::string::npos) return false;
          std::string name = line.substr(0, colon);
          for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          const size_t value = line.find_first_not_of(" \t", colon + 1);
          headers_[name] = value == std::string::npos ? "" : line.substr(value);
          break;
        }
        case State::kBody: {
          const std::string end = "\n" + delimiter_;
          const size_t at = buffer_.find(end);
          if (at == std::string::npos) {
            // The tail may be the start of the delimiter (and the '\r' before it): kept.
            if (buffer_.size() > end.size()) {
              const size_t ready = buffer_.size() - end.size();
              if (!sink(part_, headers_, buffer_.data(), ready)) return false;
              buffer_.erase(0, ready);
            }
            return true;
          }
          const size_t length = crlf_ && at > 0 && buffer_[at - 1] == '\r' ? at - 1 : at;
          if (!sink(part_, headers_, buffer_.data(), length)) return false;
          buffer_.erase(0, at + end.size());
          state_ = State::kAfterDelimiter;
          break;
        }
        case State::kDone:
          buffer_.clear();  // the epilogue
          return true;
      }
    }
  }
  bool complete() const { return state_ == State::kDone; }
  int parts() const { return part_ + 1; }

 private:
  enum class State { kPreamble, kAfterDelimiter, kHeaders, kBody, kDone };
  std::string delimiter_;
  std::string buffer_;
  State state_ = State::kPreamble;
  bool crlf_ = false;
  int part_ = -1;
  std::map<std::string, std::string> headers_;
};

// The boundary of a multipart Content-Type, without its quotes (gcloud single-quotes it).
std::string BoundaryOf(const std::string& content_type) {
  const size_t at = content_type.find("boundary=");
  if (at == std::string::npos) return "";
  std::string boundary = content_type.substr(at + 9);
  boundary = boundary.substr(0, boundary.find(';'));
  while (!boundary.empty() && boundary.back() == ' ') boundary.pop_back();
  if (boundary.size() >= 2 && (boundary[0] == '\'' || boundary[0] == '"') &&
      boundary.back() == boundary[0]) {
    boundary = boundary.substr(1, boundary.size() - 2);
  }
  return boundary;
}

// A Content-Range of a resumable PUT: "bytes a-b/N", "bytes a-b/*", "bytes */N", "bytes */*".
struct ContentRange {
  std::optional<std::pair<uint64_t, uint64_t>> bytes;  // first and last, inclusive
  std::optional<uint64_t> total;
};
std::optional<ContentRange> ParseContentRange(const std::string& text) {
  static const std::regex kRange(R"(bytes (?:(\d+)-(\d+)|\*)/(\d+|\*))");
  std::smatch match;
  if (!std::regex_match(text, match, kRange)) return std::nullopt;
  ContentRange range;
  try {
    if (match[1].matched) {
      range.bytes = std::make_pair(std::stoull(match[1]), std::stoull(match[2]));
      if (range.bytes->second < range.bytes->first) return std::nullopt;
    }
    if (match[3] != "*") range.total = std::stoull(match[3]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return range;
}

std::string RandomId() {
  static std::mt19937_64 random(std::random_device{}());
  static std::mutex mu;
  std::lock_guard lock(mu);
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(random()),
                static_cast<unsigned long long>(random()));
  return text;
}

// Streams a body to `object.file`, setting its size and hashes; false if the file failed.
bool ReceiveWhole(const httplib::ContentReader& reader, FakeGcs::Object& object) {
  std::ofstream out(object.file, std::ios::binary);
  wire::Hashes hashes;
  reader([&](const char* data, size_t length) {
    out.write(data, static_cast<std::streamsize>(length));
    hashes.Update(data, length);
    return static_cast<bool>(out);
  });
  out.close();
  hashes.Finish(object);
  return static_cast<bool>(out);
}

// Hashes the first `size` bytes of `object.file` (the file cut to them); false if it is shorter.
bool HashFile(FakeGcs::Object& object, uint64_t size) {
  std::error_code error;
  fs::resize_file(object.file, size, error);
  std::ifstream in(object.file, std::ios::binary);
  wire::Hashes hashes;
  std::string buffer(1 << 20, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hashes.Update(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  hashes.Finish(object);
  return !error && object.size == size;
}

// A hash the metadata declared that differs from the bytes' ("" if none does).
std::string HashMismatch(const json& metadata, const FakeGcs::Object& object) {
  if (metadata.contains("md5Hash") && metadata["md5Hash"] != Base64Encode(object.md5)) {
    return "Provided MD5 hash \"" + metadata["md5Hash"].dump() +
           "\" doesn't match calculated MD5 hash \"" + Base64Encode(object.md5) + "\".";
  }
  if (metadata.contains("crc32c") && metadata["crc32c"] != wire::Crc32cBase64(object.crc32c)) {
    return "Provided CRC32C \"" + metadata["crc32c"].dump() +
           "\" doesn't match calculated CRC32C \"" + wire::Crc32cBase64(object.crc32c) + "\".";
  }
  return "";
}

}  // namespace

void FakeGcs::InsertObject(Call& call, httplib::Response& response) {
  const std::string type = call.request.get_param_value("uploadType");
  if (type == "media") return UploadMedia(call, response);
  if (type == "multipart") return UploadMultipart(call, response);
  if (type == "resumable") return StartResumable(call, response);
  wire::Drain(call.reader);
  wire::Fail(response, 400, "invalid", "Invalid upload type: '" + type + "'");
}

void FakeGcs::UploadMedia(Call& call, httplib::Response& response) {
  const std::string name = call.request.get_param_value("name");
  if (name.empty() || !HasBucket(call.bucket)) {
    wire::Drain(call.reader);
    if (name.empty()) return wire::Fail(response, 400, "required", "Required");
    return wire::Fail(response, 404, "notFound", "The specified bucket does not exist.");
  }
  Object object;
  object.file = NewDataFile();
  object.content_type = call.request.get_header_value("Content-Type");
  if (object.content_type.empty()) object.content_type = "application/octet-stream";
  if (!ReceiveWhole(*call.reader, object)) {
    fs::remove(object.file);
    return wire::Fail(response, 500, "backendError", "the fake could not store the bytes");
  }
  const auto [status, body] =
      Commit(call.bucket, name, object, wire::IntParam(call.request, "ifGenerationMatch"));
  wire::Reply(response, status, body);
}

void FakeGcs::UploadMultipart(Call& call, httplib::Response& response) {
  const std::string boundary = BoundaryOf(call.request.get_header_value("Content-Type"));
  if (boundary.empty() || !HasBucket(call.bucket)) {
    wire::Drain(call.reader);
    if (!boundary.empty())
      return wire::Fail(response, 404, "notFound", "The specified bucket does not exist.");
    return wire::Fail(response, 400, "invalid", "Missing multipart boundary in the Content-Type.");
  }
  Object object;
  object.file = NewDataFile();
  std::ofstream out(object.file, std::ios::binary);
  wire::Hashes hashes;
  std::string metadata_text;
  std::string media_type;
  MultipartReader parts(boundary);
  bool ok = true;
  const MultipartReader::Sink sink = [&](int part,
                                         const std::map<std::string, std::string>& headers,
                                         const char* data, size_t size) {
    if (part == 0) {
      metadata_text.append(data, size);
      return metadata_text.size() <= (1 << 20);
    }
    if (part != 1) return false;
    if (auto type = headers.find("content-type"); type != headers.end()) media_type = type->second;
    out.write(data, static_cast<std::streamsize>(size));
    hashes.Update(data, size);
    return static_cast<bool>(out);
  };
  (*call.reader)([&](const char* data, size_t size) {
    ok = ok && parts.Feed(data, size, sink);
    return true;  // read to the end whatever it holds: the connection stays usable
  });
  out.close();
  hashes.Finish(object);
  const json metadata = json::parse(metadata_text, nullptr, false);
  if (!ok || !parts.complete() || parts.parts() != 2 || !metadata.is_object() || !out) {
    fs::remove(object.file);
    return wire::Fail(response, 400, "invalid",
                      "Invalid multipart request: a JSON metadata part, then the media part.");
  }
  std::string name = metadata.value("name", "");
  if (name.empty()) name = call.request.get_param_value("name");
  if (const std::string why = HashMismatch(metadata, object); name.empty() || !why.empty()) {
    fs::remove(object.file);
    if (name.empty()) return wire::Fail(response, 400, "required", "Required");
    return wire::Fail(response, 400, "invalid", why);
  }
  object.content_type = metadata.value("contentType", media_type);
  if (object.content_type.empty()) object.content_type = "application/octet-stream";
  const auto [status, body] =
      Commit(call.bucket, name, object, wire::IntParam(call.request, "ifGenerationMatch"));
  wire::Reply(response, status, body);
}

void FakeGcs::StartResumable(Call& call, httplib::Response& response) {
  const std::string body = wire::ReadSmallBody(*call.reader);
  const json metadata = body.empty() ? json::object() : json::parse(body, nullptr, false);
  if (!metadata.is_object()) return wire::Fail(response, 400, "parseError", "Parse Error");
  Session session;
  session.bucket = call.bucket;
  session.name = metadata.value("name", call.request.get_param_value("name"));
  if (session.name.empty()) return wire::Fail(response, 400, "required", "Required");
  session.content_type = call.request.get_header_value("X-Upload-Content-Type");
  if (session.content_type.empty()) session.content_type = metadata.value("contentType", "");
  if (session.content_type.empty()) session.content_type = "application/octet-stream";
  if (const std::string length = call.request.get_header_value("X-Upload-Content-Length");
      !length.empty() && length.find_first_not_of("0123456789") == std::string::npos) {
    session.total = std::stoull(length);
  }
  session.if_generation_match = wire::IntParam(call.request, "ifGenerationMatch");
  if (!HasBucket(call.bucket)) {
    return wire::Fail(response, 404, "notFound", "The specified bucket does not exist.");
  }
  session.file = NewDataFile();
  std::ofstream(session.file, std::ios::binary).close();
  const std::string id = RandomId();
  const std::string location = host_.base_url() + "/upload/storage/v1/b/" + call.bucket +
                               "/o?uploadType=resumable&name=" + UriEncode(session.name, false) +
                               "&upload_id=" + id;
  {
    std::lock_guard lock(mu_);
    if (sessions_.size() - finished_sessions_.size() >= kMaxOpenSessions) {
      fs::remove(session.file);
      return wire::Fail(response, 429, "rateLimitExceeded",
                        "The fake holds " + std::to_string(kMaxOpenSessions) +
                            " unfinished resumable uploads already.");
    }
    sessions_.emplace(id, std::move(session));
  }
  response.status = 200;  // exactly: apitools refuses any other answer to the initiation
  response.set_header("Location", location);
  response.set_header("X-GUploader-UploadID", id);
  response.set_content("", "text/plain");
}

void FakeGcs::PutChunk(Call& call, httplib::Response& response) {
  const std::string id = call.request.get_param_value("upload_id");
  const std::string range_header = call.request.get_header_value("Content-Range");
  std::optional<ContentRange> range = range_header.empty()
                                          ? std::optional<ContentRange>(ContentRange{})
                                          : ParseContentRange(range_header);
  if (!range) {
    wire::Drain(call.reader);
    return wire::Fail(response, 400, "invalid", "Invalid Content-Range: " + range_header);
  }
  const bool whole = range_header.empty();  // a PUT of the whole object at once
  uint64_t first = 0;
  fs::path file;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.receiving) {
      wire::Drain(call.reader);
      if (it == sessions_.end())
        return wire::Fail(response, 404, "notFound", "No such upload: " + id);
      return wire::Fail(response, 503, "backendError", "The session is receiving another request.");
    }
    Session& session = it->second;
    if (session.result) {
      wire::Drain(call.reader);
      return wire::Reply(response, 200, *session.result);
    }
    if (range->total && session.total && *range->total != *session.total) {
      wire::Drain(call.reader);
      return wire::Fail(response, 400, "invalid",
                        "The upload's size changed: " + std::to_string(*session.total) + " then " +
                            std::to_string(*range->total));
    }
    if (range->bytes && range->bytes->first > session.received) {
      wire::Drain(call.reader);
      return wire::Fail(
          response, 400, "invalid",
          "Invalid request. According to the Content-Range header, the upload offset is " +
              std::to_string(range->bytes->first) +
              " byte(s), which exceeds already uploaded size of " +
              std::to_string(session.received) + " byte(s).");
    }
    first = range->bytes ? range->bytes->first : 0;
    session.receiving = true;
    file = session.file;
  }
  // The body, written at its offset as it comes (without the lock: it may be a GiB).
  uint64_t written = 0;
  bool stored = true;
  {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    stored = fd >= 0;
    (*call.reader)([&](const char* data, size_t length) {
      while (stored && length > 0) {
        const ssize_t put = ::pwrite(fd, data, length, static_cast<off_t>(first + written));
        if (put <= 0) {
          stored = false;
          break;
        }
        data += put;
        length -= static_cast<size_t>(put);
        written += static_cast<uint64_t>(put);
      }
      return true;  // read to the end whatever happened: the connection stays usable
    });
    if (fd >= 0) ::close(fd);
  }
  const uint64_t declared =
      range->bytes ? range->bytes->second - range->bytes->first + 1 : (whole ? written : 0);
  if (whole) range->total = written;
  Object object;
  uint64_t total = 0;
  std::optional<int64_t> if_generation_match;
  std::string bucket;
  std::string name;
  {
    std::lock_guard lock(mu_);
    Session& session = sessions_.at(id);
    if (!stored || written != declared) {
      session.receiving = false;
      if (!stored)
        return wire::Fail(response, 500, "backendError", "the fake could not store the bytes");
      return wire::Fail(response, 400, "invalid",
                        "Content-Range says " + std::to_string(declared) +
                            " byte(s) but the body had " + std::to_string(written) + ".");
    }
    session.received = std::max(session.received, first + written);
    if (range->total) session.total = range->total;
    if (!session.total || session.received < *session.total) {
      session.receiving = false;
      response.status = 308;  // Resume Incomplete; never a Location (requests would follow it)
      if (session.received > 0) {
        response.set_header("Range", "bytes=0-" + std::to_string(session.received - 1));
      }
      return;
    }
    if (session.received > *session.total) {
      session.receiving = false;
      return wire::Fail(response, 400, "invalid",
                        "The upload has " + std::to_string(session.received) +
                            " byte(s), more than its size " + std::to_string(*session.total) + ".");
    }
    total = *session.total;
    object.file = session.file;
    object.content_type = session.content_type;
    if_generation_match = session.if_generation_match;
    bucket = session.bucket;
    name = session.name;
  }
  // The last byte came: the object is made (still `receiving`, so no other PUT interferes).
  std::pair<int, json> answer;
  if (!HashFile(object, total)) {
    fs::remove(object.file);
    answer = {500, wire::ErrorJson(500, "backendError", "the fake lost the upload's bytes")};
  } else {
    answer = Commit(bucket, name, object, if_generation_match);
  }
  {
    std::lock_guard lock(mu_);
    if (answer.first == 200) {
      Session& session = sessions_.at(id);
      session.receiving = false;
      session.result = answer.second;
      finished_sessions_.push_back(id);
      while (finished_sessions_.size() > kMaxFinishedSessions) {
        sessions_.erase(finished_sessions_.front());
        finished_sessions_.pop_front();
      }
    } else {
      sessions_.erase(id);  // its file is gone: the upload cannot go on
    }
  }
  wire::Reply(response, answer.first, answer.second);
}

}  // namespace det::testing
