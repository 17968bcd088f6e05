#include "cli/master_url.h"

#include <curl/curl.h>

#include <nlohmann/json.hpp>

#include "bus/security.h"
#include "cli/shared_library.h"
#include "common/url.h"

namespace det::cli {
namespace {

constexpr const char* kCurlLibrary = "libcurl.so.4";

// The libcurl calls det makes, by their C names without the `curl_easy_` prefix.
struct LibCurl {
  CURL* (*init)();
  CURLcode (*setopt)(CURL*, CURLoption, ...);
  CURLcode (*perform)(CURL*);
  CURLcode (*getinfo)(CURL*, CURLINFO, ...);
  void (*cleanup)(CURL*);
  const char* (*strerror)(CURLcode);
};

Result<LibCurl> OpenCurl() {
  DET_ASSIGN_OR_RETURN(void* library,
                       OpenSharedLibrary(kCurlLibrary, "a master given by URL", "libcurl4"));
  LibCurl lib{};
  const bool found = FindSymbol(library, "curl_easy_init", &lib.init) &&
                     FindSymbol(library, "curl_easy_setopt", &lib.setopt) &&
                     FindSymbol(library, "curl_easy_perform", &lib.perform) &&
                     FindSymbol(library, "curl_easy_getinfo", &lib.getinfo) &&
                     FindSymbol(library, "curl_easy_cleanup", &lib.cleanup) &&
                     FindSymbol(library, "curl_easy_strerror", &lib.strerror);
  if (!found) return MissingSymbol(kCurlLibrary);
  return lib;  // the library stays open for the rest of the process
}

size_t Append(char* data, size_t size, size_t count, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() > (1 << 20)) return 0;  // no master's info is this large
  body->append(data, size * count);
  return size * count;
}

void ApplyTls(const LibCurl& curl, CURL* handle, const MasterTls& tls) {
  if (tls.cert_file == "noverify") {
    curl.setopt(handle, CURLOPT_SSL_VERIFYPEER, 0L);
    curl.setopt(handle, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!tls.cert_file.empty()) {
    curl.setopt(handle, CURLOPT_CAINFO, tls.cert_file.c_str());
  } else if (!tls.cert_pem.empty()) {
    curl_blob blob{const_cast<char*>(tls.cert_pem.data()), tls.cert_pem.size(), CURL_BLOB_NOCOPY};
    curl.setopt(handle, CURLOPT_CAINFO_BLOB, &blob);
  }
}

// GET <url>/info (Determined's, no login needed): its status and body.
Result<std::pair<long, std::string>> GetMasterInfo(const std::string& url, const MasterTls& tls) {
  static const Result<LibCurl> lib = OpenCurl();
  if (!lib.ok()) return lib.status();
  CURL* handle = lib->init();
  if (handle == nullptr) return Internal("libcurl could not be initialised");
  std::string base = url;
  while (base.ends_with('/')) base.pop_back();
  const std::string info_url = base + "/info";
  std::string body;
  lib->setopt(handle, CURLOPT_URL, info_url.c_str());
  lib->setopt(handle, CURLOPT_NOSIGNAL, 1L);
  lib->setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  lib->setopt(handle, CURLOPT_TIMEOUT_MS, 15000L);
  lib->setopt(handle, CURLOPT_WRITEFUNCTION, &Append);
  lib->setopt(handle, CURLOPT_WRITEDATA, &body);
  ApplyTls(*lib, handle, tls);
  const CURLcode code = lib->perform(handle);
  long status = 0;
  lib->getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  lib->cleanup(handle);
  if (code != CURLE_OK) {
    return Unavailable("cannot reach the master at " + url + ": " + lib->strerror(code) +
                       (url.starts_with("https")
                            ? " (for a certificate of its own, set DET_MASTER_CERT_FILE to it, "
                              "or to noverify)"
                            : " (DET_MASTER and -m name the master's REST address, as at "
                              "Determined; name its gateway itself as tcp://host:port)"));
  }
  return std::pair{status, std::move(body)};
}

}  // namespace

bool IsMasterUrl(const std::string& master) {
  return master.starts_with("http://") || master.starts_with("https://");
}

Result<std::string> CanonicalMaster(const std::string& master) {
  if (master.starts_with("tcp://")) return master;  // the gateway itself
  const bool bare = !IsMasterUrl(master);
  const std::string url = bare ? "http://" + master : master;
  const auto refuse = [&](const std::string& why) {
    return InvalidArgument("the master \"" + master + "\" (DET_MASTER or -m): " + why +
                           "; write it as host:port, http(s)://host:port or, for its gateway, "
                           "tcp://host:port");
  };
  if (master.find_first_of("?#@ ") != std::string::npos) {
    return refuse("a master's address has no user, password, query, fragment or space");
  }
  Result<UrlParts> parts = ParseUrl(url);
  if (!parts.ok()) return refuse(parts.status().message());
  if (bare && !parts->port_given) parts->port = 8080;  // Determined's default for a bare host
  std::string path = parts->path;
  while (path.ends_with('/')) path.pop_back();
  const std::string host =
      parts->host.find(':') != std::string::npos ? "[" + parts->host + "]" : parts->host;
  return parts->scheme + "://" + host + ":" + std::to_string(parts->port) + path;
}

Result<int> GatewayPortOfMasterInfo(const std::string& body) {
  const nlohmann::json info = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const auto port = info.is_object() ? info.find("gateway_port") : info.end();
  if (port == info.end() || !port->is_number_integer() || port->get<int64_t>() <= 0 ||
      port->get<int64_t>() > 65535) {
    return FailedPrecondition("its /info names no gateway port (is it a det-master?)");
  }
  return static_cast<int>(port->get<int64_t>());
}

Result<std::string> GatewayKeyOfMasterInfo(const std::string& body) {
  const nlohmann::json info = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const auto key = info.is_object() ? info.find("gateway_public_key") : info.end();
  if (key == info.end() || (key->is_string() && key->get<std::string>().empty()))
    return std::string();
  if (!key->is_string() || !bus::IsZ85Key(key->get<std::string>())) {
    return FailedPrecondition("its /info names a gateway_public_key that is not a CURVE key");
  }
  return key->get<std::string>();
}

Result<MasterGateway> GatewayOfMasterUrl(const std::string& url, const MasterTls& tls) {
  DET_ASSIGN_OR_RETURN(UrlParts parts, ParseUrl(url));
  DET_ASSIGN_OR_RETURN(auto answer, GetMasterInfo(url, tls));
  const auto& [status, body] = answer;
  if (status != 200) {
    return FailedPrecondition("the master at " + url + " answered HTTP " + std::to_string(status) +
                              " to GET /info");
  }
  auto port = GatewayPortOfMasterInfo(body);
  if (!port.ok())
    return FailedPrecondition("the master at " + url + ": " + port.status().message());
  auto key = GatewayKeyOfMasterInfo(body);
  if (!key.ok()) return FailedPrecondition("the master at " + url + ": " + key.status().message());
  const std::string host =
      parts.host.find(':') != std::string::npos ? "[" + parts.host + "]" : parts.host;
  return MasterGateway{"tcp://" + host + ":" + std::to_string(*port), *key};
}

}  // namespace det::cli
