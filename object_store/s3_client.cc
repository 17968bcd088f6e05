#include "object_store/s3_client.h"

#include <openssl/evp.h>

#include <array>
#include <pugixml.hpp>
#include <set>

#include "cloud_aws/sigv4.h"
#include "common/base64.h"
#include "common/strings.h"
#include "common/url.h"

namespace det::object_store {
namespace {

constexpr size_t kMaxDeleteKeys = 1000;  // S3's limit for one DeleteObjects request
constexpr const char* kNamespace = "http://s3.amazonaws.com/doc/2006-03-01/";

const std::set<std::string> kThrottlingCodes = {"SlowDown",
                                                "Throttling",
                                                "ThrottlingException",
                                                "RequestLimitExceeded",
                                                "TooManyRequestsException",
                                                "BandwidthLimitExceeded"};
const std::set<std::string> kAuthCodes = {
    "AccessDenied",  "InvalidAccessKeyId",   "SignatureDoesNotMatch", "ExpiredToken",
    "InvalidToken",  "TokenRefreshRequired", "AccountProblem",        "AllAccessDisabled",
    "NoCredentials", "InvalidSecurity",      "RequestTimeTooSkewed",  "Forbidden"};
const std::set<std::string> kNotFoundCodes = {"NoSuchBucket", "NoSuchKey", "NoSuchUpload",
                                              "NotFound"};
const std::set<std::string> kTransientCodes = {"InternalError", "ServiceUnavailable",
                                               "RequestTimeout", "OperationAborted"};

std::string Md5Base64(const std::string& data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_md5(), nullptr);
  return Base64Encode(std::string(reinterpret_cast<const char*>(digest.data()), size));
}

// A key as ListObjectsV2 sends it with encoding-type=url (form-style: '+' is a space).
std::string UrlDecodedKey(const std::string& text) {
  std::string plus_as_space = text;
  std::replace(plus_as_space.begin(), plus_as_space.end(), '+', ' ');
  return UriDecode(plus_as_space);
}

ObjectStoreError Malformed(const std::string& op, const std::string& what) {
  return ObjectStoreError{"s3", op, "MalformedResponse",        what,
                          200,  "", CloudErrorKind::kTransient, ""};
}

// The S3-compatible bucket names that can be a host name label (no dots: they would not match a
// TLS certificate's wildcard).
bool DnsCompatible(const std::string& bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (char c : bucket) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return bucket.front() != '-' && bucket.back() != '-';
}

// The region S3 says the bucket is in, from a refused or redirected call ("" when it names none).
std::string BucketRegionOf(const HttpResponse& response) {
  if (auto it = response.headers.find("x-amz-bucket-region"); it != response.headers.end()) {
    return it->second;
  }
  pugi::xml_document doc;
  if (!doc.load_buffer(response.body.data(), response.body.size())) return "";
  return doc.child("Error").child_value("Region");
}

}  // namespace

CloudErrorKind ClassifyS3Error(const std::string& code, long http_status) {
  if (kThrottlingCodes.contains(code) || http_status == 429) return CloudErrorKind::kThrottled;
  if (kAuthCodes.contains(code)) return CloudErrorKind::kAuth;
  if (kNotFoundCodes.contains(code)) return CloudErrorKind::kNotFound;
  if (kTransientCodes.contains(code) || http_status >= 500 || http_status == 0) {
    return CloudErrorKind::kTransient;
  }
  if (http_status == 403) return CloudErrorKind::kAuth;
  if (http_status == 404) return CloudErrorKind::kNotFound;
  return CloudErrorKind::kInvalid;
}

ObjectStoreError ReadS3Error(const std::string& op, long http_status, const std::string& body,
                             const std::map<std::string, std::string>& headers) {
  ObjectStoreError error{"s3", op, "", "", http_status, "", CloudErrorKind::kTransient, ""};
  pugi::xml_document doc;
  if (!body.empty() && doc.load_buffer(body.data(), body.size())) {
    const pugi::xml_node root = doc.child("Error");
    error.code = root.child_value("Code");
    error.message = root.child_value("Message");
    error.request_id = root.child_value("RequestId");
  }
  if (error.request_id.empty()) {
    if (auto it = headers.find("x-amz-request-id"); it != headers.end()) {
      error.request_id = it->second;
    }
  }
  if (error.code.empty()) {
    // HEAD answers have no body; others may come from a proxy in front of S3.
    if (http_status == 404) error.code = "NotFound";
    if (http_status == 403) error.code = "Forbidden";
    if (http_status == 301) error.code = "PermanentRedirect";
    error.message = "HTTP " + std::to_string(http_status) + " without an S3 error document";
  }
  error.kind = ClassifyS3Error(error.code, http_status);
  return error;
}

ObjectResult<ListPage> ReadListObjectsV2(const std::string& body) {
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size()) || !doc.child("ListBucketResult")) {
    return Malformed("ListObjectsV2", "the answer is not a ListBucketResult document");
  }
  const pugi::xml_node root = doc.child("ListBucketResult");
  const bool url_encoded = std::string(root.child_value("EncodingType")) == "url";
  ListPage page;
  for (const pugi::xml_node contents : root.children("Contents")) {
    const std::string key = contents.child_value("Key");
    if (key.empty()) return Malformed("ListObjectsV2", "an object without a Key");
    page.objects.push_back(
        {url_encoded ? UrlDecodedKey(key) : key, contents.child("Size").text().as_ullong()});
  }
  if (std::string(root.child_value("IsTruncated")) == "true") {
    page.next_token = root.child_value("NextContinuationToken");
    if (page.next_token.empty()) {
      return Malformed("ListObjectsV2", "IsTruncated without a NextContinuationToken");
    }
  }
  return page;
}

ObjectResult<std::vector<S3KeyError>> ReadDeleteResult(const std::string& body) {
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size()) || !doc.child("DeleteResult")) {
    return Malformed("DeleteObjects", "the answer is not a DeleteResult document");
  }
  std::vector<S3KeyError> errors;
  for (const pugi::xml_node error : doc.child("DeleteResult").children("Error")) {
    errors.push_back(
        {error.child_value("Key"), error.child_value("Code"), error.child_value("Message")});
  }
  return errors;
}

S3Client::S3Client(S3ClientOptions options, std::shared_ptr<aws::CredentialsChain> credentials,
                   const Clock& clock)
    : options_(std::move(options)),
      credentials_(std::move(credentials)),
      clock_(clock),
      region_(options_.region) {}

bool S3Client::VirtualHost() const {
  if (options_.addressing_style == "virtual") return true;
  if (options_.addressing_style == "path") return false;
  return options_.endpoint_url.empty() && DnsCompatible(options_.bucket);
}

ObjectResult<HttpResponse> S3Client::Attempt(const Call& call) {
  auto fail = [&](std::string code, std::string message, CloudErrorKind kind) {
    return ObjectStoreError{"s3", call.op, std::move(code), std::move(message), 0,
                            "",   kind,    options_.bucket};
  };
  Result<aws::Credentials> credentials = credentials_->Get();
  if (!credentials.ok()) {
    return fail("NoCredentials", credentials.status().message(), CloudErrorKind::kAuth);
  }
  UrlParts base{"https", "s3." + region_ + ".amazonaws.com", 443, ""};
  if (!options_.endpoint_url.empty()) {
    Result<UrlParts> parsed = ParseUrl(options_.endpoint_url);
    if (!parsed.ok())
      return fail("InvalidEndpoint", parsed.status().message(), CloudErrorKind::kInvalid);
    base = *parsed;
    if (base.path == "/") base.path = "";
    if (base.path.ends_with('/')) base.path.pop_back();
  }
  const bool virtual_host = VirtualHost();
  if (virtual_host) base.host = options_.bucket + "." + base.host;
  std::string path = base.path + (virtual_host ? "" : "/" + options_.bucket);
  if (!call.key.empty() || virtual_host) path += "/" + call.key;
  aws::SignableRequest signable{call.method, path, call.query, call.headers, call.body};
  signable.headers.insert(signable.headers.begin(), {"Host", base.HostHeader()});
  aws::SignRequest(&signable, *credentials, {region_, "s3"}, clock_.WallNow());
  const std::string port =
      base.port == (base.scheme == "https" ? 443 : 80) ? "" : ":" + std::to_string(base.port);
  HttpRequest request{call.method,
                      base.scheme + "://" + base.host + port + UriEncode(path, true) +
                          (call.query.empty() ? "" : "?" + call.query),
                      signable.headers, call.body, options_.timeout};
  Result<HttpResponse> response = http_.Send(request);
  if (!response.ok()) return fail("", response.status().message(), CloudErrorKind::kTransient);
  if (response->status >= 200 && response->status < 300) return std::move(*response);
  ObjectStoreError error =
      ReadS3Error(call.op, response->status, response->body, response->headers);
  error.bucket = options_.bucket;
  const std::string bucket_region = BucketRegionOf(*response);
  if (!bucket_region.empty() && bucket_region != region_ &&
      (error.code == "AuthorizationHeaderMalformed" || error.code == "PermanentRedirect" ||
       response->status == 301)) {
    error.code = "WrongRegion";
    error.message = bucket_region;
  }
  return error;
}

ObjectResult<HttpResponse> S3Client::Send(const Call& call) {
  bool redirected = false;
  bool refreshed = false;
  for (int attempt = 0;;) {
    ObjectResult<HttpResponse> result = Attempt(call);
    if (result.ok()) return result;
    const ObjectStoreError& error = result.error();
    if (error.code == "WrongRegion" && !redirected) {
      region_ = error.message;  // the bucket's region, as S3 named it
      redirected = true;
      continue;
    }
    if (error.code == "ExpiredToken" && !refreshed) {
      credentials_->Invalidate();
      refreshed = true;
      continue;
    }
    const bool retryable =
        error.kind == CloudErrorKind::kThrottled || error.kind == CloudErrorKind::kTransient;
    if (!retryable || attempt + 1 >= options_.retry.max_attempts) return result;
    clock_.SleepFor(BackoffDelay(options_.retry, attempt));
    ++attempt;
  }
}

ObjectResult<std::vector<ObjectInfo>> S3Client::List(const std::string& prefix) {
  return ListEveryPage(
      "s3", "ListObjectsV2", options_.bucket,
      [&](const std::string& token) -> ObjectResult<ListPage> {
        std::string query = "encoding-type=url&list-type=2&prefix=" + UriEncode(prefix, false);
        if (!token.empty()) {
          query = "continuation-token=" + UriEncode(token, false) + "&" + query;
        }
        ObjectResult<HttpResponse> response = Send({"ListObjectsV2", "GET", "", query, "", {}});
        if (!response.ok()) return response.error();
        return ReadListObjectsV2(response->body);
      });
}

ObjectResult<std::vector<S3KeyError>> S3Client::DeleteBatch(const std::vector<std::string>& keys) {
  std::string body = std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Delete xmlns=\"") +
                     kNamespace + "\"><Quiet>true</Quiet>";
  for (const std::string& key : keys) body += "<Object><Key>" + XmlEscape(key) + "</Key></Object>";
  body += "</Delete>";
  ObjectResult<HttpResponse> response =
      Send({"DeleteObjects",
            "POST",
            "",
            "delete=",
            body,
            {{"Content-Type", "application/xml"}, {"Content-MD5", Md5Base64(body)}}});
  if (!response.ok()) return response.error();
  return ReadDeleteResult(response->body);
}

ObjectResult<size_t> S3Client::Delete(const std::vector<std::string>& keys) {
  std::vector<S3KeyError> left;
  for (size_t start = 0; start < keys.size(); start += kMaxDeleteKeys) {
    std::vector<std::string> pending(
        keys.begin() + static_cast<std::ptrdiff_t>(start),
        keys.begin() + static_cast<std::ptrdiff_t>(std::min(keys.size(), start + kMaxDeleteKeys)));
    for (int attempt = 0; !pending.empty(); ++attempt) {
      ObjectResult<std::vector<S3KeyError>> failed = DeleteBatch(pending);
      if (!failed.ok()) return failed.error();
      pending.clear();
      std::vector<S3KeyError> retry_later;
      for (S3KeyError& error : *failed) {
        // A key's error has no status of its own: an unknown code is the request's fault.
        const CloudErrorKind kind = ClassifyS3Error(error.code, 400);
        const bool retryable = kind == CloudErrorKind::kThrottled ||
                               (kind == CloudErrorKind::kTransient && !error.code.empty());
        if (retryable && attempt + 1 < options_.retry.max_attempts) {
          pending.push_back(error.key);
        } else {
          left.push_back(std::move(error));
        }
      }
      if (!pending.empty()) clock_.SleepFor(BackoffDelay(options_.retry, attempt));
    }
  }
  if (left.empty()) return keys.size();
  const S3KeyError& first = left.front();
  return ObjectStoreError{"s3",
                          "DeleteObjects",
                          first.code,
                          std::to_string(left.size()) + " of " + std::to_string(keys.size()) +
                              " keys were not deleted; the first, " + first.key + ": " +
                              first.message,
                          0,
                          "",
                          ClassifyS3Error(first.code, 400),
                          options_.bucket};
}

ObjectResult<bool> S3Client::Put(const std::string& key, const std::string& body) {
  ObjectResult<HttpResponse> response =
      Send({"PutObject", "PUT", key, "", body, {{"Content-Type", "application/octet-stream"}}});
  if (!response.ok()) return response.error();
  return true;
}

ObjectResult<std::string> S3Client::Get(const std::string& key) {
  ObjectResult<HttpResponse> response = Send({"GetObject", "GET", key, "", "", {}});
  if (!response.ok()) return response.error();
  return std::move(response->body);
}

ObjectResult<std::string> S3Client::ReadRange(const std::string& key, uint64_t offset,
                                              uint64_t length) {
  if (length == 0) return std::string();
  ObjectResult<HttpResponse> response =
      Send({"GetObject", "GET", key, "", "", {{"Range", ByteRange(offset, length)}}});
  if (!response.ok()) {
    const ObjectStoreError& error = response.error();
    if (error.code == "InvalidRange" || error.http_status == 416) return std::string();  // the end
    return response.error();
  }
  return PieceOfAnswer(response->status, std::move(response->body), offset, length);
}

}  // namespace det::object_store
