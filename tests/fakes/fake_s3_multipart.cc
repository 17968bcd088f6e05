#include <pugixml.hpp>

#include "tests/fakes/fake_s3_wire.h"

// The fake S3's multipart uploads: create, upload a part, complete, abort, list parts.

namespace det::testing {
using namespace s3wire;

void FakeS3::CreateMultipartUpload(Call& call, httplib::Response& response) {
  std::lock_guard lock(mu_);
  if (buckets_.count(call.bucket) == 0) {
    return Fail(call.request, response, 404, "NoSuchBucket", "The specified bucket does not exist",
                Element("BucketName", call.bucket));
  }
  const std::string id = Base64UrlEncode("upload-" + std::to_string(next_id_++));
  uploads_[id] = Upload{call.bucket, call.key, {}};
  response.set_content(S3Document("InitiateMultipartUploadResult", Element("Bucket", call.bucket) +
                                                                       Element("Key", call.key) +
                                                                       Element("UploadId", id)),
                       "application/xml");
}

void FakeS3::UploadPart(Call& call, httplib::Response& response) {
  const std::string id = call.params["uploadId"];
  int number = 0;
  try {
    number = std::stoi(call.params["partNumber"]);
  } catch (const std::exception&) {
  }
  if (number < 1 || number > 10000) {
    Drain(call.reader);
    return Fail(call.request, response, 400, "InvalidArgument",
                "Part number must be an integer between 1 and 10000, inclusive");
  }
  {
    std::lock_guard lock(mu_);
    if (uploads_.count(id) == 0) {
      Drain(call.reader);
      return Fail(call.request, response, 404, "NoSuchUpload",
                  "The specified upload does not exist. The upload ID may be invalid, or the "
                  "upload may have been aborted or completed.",
                  Element("UploadId", id));
    }
  }
  const fs::path file = NewDataFile();
  auto received = Receive(call.request, response, *call.reader, file);
  if (!received) return;
  Object part{file, received->first, "\"" + Digests::Hex(received->second) + "\"", "",
              Clock::now()};
  response.set_header("ETag", part.etag);
  std::lock_guard lock(mu_);
  auto upload = uploads_.find(id);
  if (upload == uploads_.end()) {
    fs::remove(file);
    return Fail(call.request, response, 404, "NoSuchUpload",
                "The specified upload does not exist.");
  }
  Replace(upload->second.parts, number, part);
}

void FakeS3::CompleteMultipartUpload(Call& call, httplib::Response& response) {
  const std::string id = call.params["uploadId"];
  pugi::xml_document document;
  const pugi::xml_node root = document.load_string(call.request.body.c_str())
                                  ? document.child("CompleteMultipartUpload")
                                  : pugi::xml_node();
  std::vector<std::pair<int, std::string>> listed;
  for (pugi::xml_node part : root.children("Part")) {
    listed.emplace_back(part.child("PartNumber").text().as_int(), part.child_value("ETag"));
  }
  if (!root || listed.empty()) {
    return Fail(call.request, response, 400, "MalformedXML",
                "The XML you provided was not well-formed or did not validate against our "
                "published schema.");
  }
  Upload upload;
  {
    std::lock_guard lock(mu_);
    auto it = uploads_.find(id);
    if (it == uploads_.end()) {
      return Fail(call.request, response, 404, "NoSuchUpload",
                  "The specified upload does not exist. The upload ID may be invalid, or the "
                  "upload may have been aborted or completed.",
                  Element("UploadId", id));
    }
    upload = it->second;
  }
  std::string md5s;
  for (size_t i = 0; i < listed.size(); ++i) {
    const auto& [number, etag] = listed[i];
    if (i > 0 && number <= listed[i - 1].first) {
      return Fail(call.request, response, 400, "InvalidPartOrder",
                  "The list of parts was not in ascending order. The parts list must be specified "
                  "in order by part number.");
    }
    auto part = upload.parts.find(number);
    if (part == upload.parts.end() || Unquoted(part->second.etag) != Unquoted(etag)) {
      return Fail(call.request, response, 400, "InvalidPart",
                  "One or more of the specified parts could not be found. The part may not have "
                  "been uploaded, or the specified entity tag may not match the part's entity tag.",
                  Element("PartNumber", std::to_string(number)) + Element("ETag", etag));
    }
    if (i + 1 < listed.size() && part->second.size < options_.min_part_size) {
      return Fail(call.request, response, 400, "EntityTooSmall",
                  "Your proposed upload is smaller than the minimum allowed object size.",
                  Element("PartNumber", std::to_string(number)) +
                      Element("MinSizeAllowed", std::to_string(options_.min_part_size)));
    }
    const std::string hex = Unquoted(part->second.etag);
    for (size_t at = 0; at + 1 < hex.size(); at += 2) {
      md5s += static_cast<char>(std::stoi(hex.substr(at, 2), nullptr, 16));
    }
  }
  const fs::path file = NewDataFile();
  uint64_t size = 0;
  uint64_t copied = 0;
  {
    std::ofstream out(file, std::ios::binary);
    for (const auto& [number, etag] : listed) {
      std::ifstream in(upload.parts.at(number).file, std::ios::binary);
      char buffer[1 << 16];
      while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
        out.write(buffer, in.gcount());
        copied += static_cast<uint64_t>(in.gcount());
      }
      size += upload.parts.at(number).size;
    }
    out.flush();
    if (!out) copied = 0;
  }
  if (copied != size) {
    // A part sent again (or the upload aborted) while this one was completing.
    fs::remove(file);
    return Fail(call.request, response, 500, "InternalError",
                "a part changed while the upload was being completed; complete it again");
  }
  Object object{
      file, size,
      "\"" + Digests::Hex(Digests::Md5(md5s)) + "-" + std::to_string(listed.size()) + "\"", "",
      Clock::now()};
  std::lock_guard lock(mu_);
  auto it = uploads_.find(id);
  auto bucket = buckets_.find(upload.bucket);
  if (it == uploads_.end() || bucket == buckets_.end()) {
    fs::remove(file);
    return Fail(call.request, response, 404, "NoSuchUpload",
                "The specified upload does not exist.");
  }
  for (const auto& [number, part] : it->second.parts) fs::remove(part.file);
  uploads_.erase(it);
  Replace(bucket->second.objects, upload.key, object);
  response.set_content(S3Document("CompleteMultipartUploadResult",
                                  Element("Location", "/" + upload.bucket + "/" + upload.key) +
                                      Element("Bucket", upload.bucket) +
                                      Element("Key", upload.key) + Element("ETag", object.etag)),
                       "application/xml");
}

void FakeS3::AbortMultipartUpload(Call& call, httplib::Response& response) {
  std::lock_guard lock(mu_);
  auto it = uploads_.find(call.params["uploadId"]);
  if (it == uploads_.end()) {
    return Fail(call.request, response, 404, "NoSuchUpload",
                "The specified upload does not exist. The upload ID may be invalid, or the "
                "upload may have been aborted or completed.");
  }
  for (const auto& [number, part] : it->second.parts) fs::remove(part.file);
  uploads_.erase(it);
  response.status = 204;
}

void FakeS3::ListParts(Call& call, httplib::Response& response) {
  std::lock_guard lock(mu_);
  auto it = uploads_.find(call.params["uploadId"]);
  if (it == uploads_.end()) {
    return Fail(call.request, response, 404, "NoSuchUpload",
                "The specified upload does not exist.");
  }
  std::string inner = Element("Bucket", it->second.bucket) + Element("Key", it->second.key) +
                      Element("UploadId", it->first) + Element("IsTruncated", "false");
  for (const auto& [number, part] : it->second.parts) {
    inner += "<Part>" + Element("PartNumber", std::to_string(number)) +
             Element("LastModified", IsoTime(part.modified)) + Element("ETag", part.etag) +
             Element("Size", std::to_string(part.size)) + "</Part>";
  }
  response.set_content(S3Document("ListPartsResult", inner), "application/xml");
}

}  // namespace det::testing
