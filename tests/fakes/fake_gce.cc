#include "tests/fakes/fake_gce.h"

#include <httplib.h>

#include <ctime>
#include <fstream>
#include <regex>

#include "tests/fakes/booted_script.h"

namespace det::testing {
namespace {

using Steady = std::chrono::steady_clock;
using SystemClock = std::chrono::system_clock;
using nlohmann::json;

// Compute Engine's error document.
std::pair<int, json> ErrorReply(int status, const std::string& reason, const std::string& message) {
  static const std::map<int, std::string> kStatus = {
      {400, "INVALID_ARGUMENT"}, {401, "UNAUTHENTICATED"}, {403, "PERMISSION_DENIED"},
      {404, "NOT_FOUND"},        {409, "ALREADY_EXISTS"},  {429, "RESOURCE_EXHAUSTED"},
      {500, "INTERNAL"},         {503, "UNAVAILABLE"}};
  auto name = kStatus.find(status);
  return {status,
          {{"error",
            {{"code", status},
             {"message", message},
             {"errors", {{{"message", message}, {"domain", "global"}, {"reason", reason}}}},
             {"status", name == kStatus.end() ? "UNKNOWN" : name->second}}}}};
}

// Compute Engine writes times in RFC 3339 with the zone's offset (here a fixed -07:00).
std::string Rfc3339(SystemClock::time_point time) {
  const auto shifted = time - std::chrono::hours(7);
  const std::time_t seconds = SystemClock::to_time_t(shifted);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[40];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count() % 1000;
  char fraction[8];
  std::snprintf(fraction, sizeof(fraction), ".%03lld", static_cast<long long>(millis));
  return std::string(text) + fraction + "-07:00";
}

std::string LastPart(const std::string& url) {
  const size_t slash = url.rfind('/');
  return slash == std::string::npos ? url : url.substr(slash + 1);
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string JoinPath(const std::vector<std::string>& parts) {
  std::string joined;
  for (const std::string& part : parts) joined += (joined.empty() ? "" : "/") + part;
  return joined;
}

// "" if `resource` is an instance insert can take, else why not.
std::string InvalidInsert(const json& resource) {
  static const std::regex kName(R"([a-z]([-a-z0-9]{0,61}[a-z0-9])?)");
  static const std::regex kLabelKey(R"([a-z][a-z0-9_-]{0,62})");
  static const std::regex kLabelValue(R"([a-z0-9_-]{0,63})");
  if (!resource.is_object()) return "Invalid JSON payload: expected an Instance resource.";
  const std::string name = resource.value("name", "");
  if (!std::regex_match(name, kName)) {
    return "Invalid value for field 'resource.name': '" + name +
           "'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'";
  }
  if (resource.value("machineType", "").empty()) return "Missing field 'resource.machineType'.";
  bool boot = false;
  for (const json& disk : resource.value("disks", json::array())) {
    if (disk.value("boot", false) && disk.contains("initializeParams") &&
        !disk["initializeParams"].value("sourceImage", "").empty()) {
      boot = true;
    }
  }
  if (!boot) return "Invalid value for field 'resource.disks': no boot disk with a source image.";
  const json labels = resource.value("labels", json::object());  // outlives the loop's items()
  for (const auto& [key, value] : labels.items()) {
    if (!std::regex_match(key, kLabelKey) || !value.is_string() ||
        !std::regex_match(value.get<std::string>(), kLabelValue)) {
      return "Invalid value for field 'resource.labels': '" + key + "'.";
    }
  }
  return "";
}

// The label and status terms of a list filter ("(labels.a = \"b\") (status = RUNNING)"); other
// terms are ignored (gcloud filters again on its side).
bool FilterMatches(const std::string& filter, const std::map<std::string, std::string>& labels,
                   const std::string& status) {
  static const std::regex kLabel(R"re(labels\.([a-z0-9_-]+)\s*(?:=|eq)\s*"?([a-z0-9_-]*)"?)re");
  static const std::regex kStatus(R"re(status\s*(?:=|eq)\s*"?([A-Z]+)"?)re");
  for (std::sregex_iterator it(filter.begin(), filter.end(), kLabel), end; it != end; ++it) {
    auto label = labels.find((*it)[1]);
    if (label == labels.end() || label->second != (*it)[2]) return false;
  }
  std::smatch match;
  if (std::regex_search(filter, match, kStatus) && match[1] != status) return false;
  return true;
}

}  // namespace

struct FakeGce::Instance {
  std::string name;
  std::string id;
  std::string status = "PROVISIONING";
  std::string machine_type;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> metadata;
  std::string provisioning_model = "STANDARD";
  bool preemptible = false;
  std::string termination_action;
  // Preempted: the metadata's instance/preempted says TRUE and the VM is STOPPING until then.
  std::optional<Steady::time_point> preempted_until;
  SystemClock::time_point created;
  Steady::time_point staged_at;
  json resource;  // as inserted
  int index = 0;
  BootedScript boot;
};

struct FakeGce::Operation {
  std::string name;
  std::string type;
  std::string target;
  std::string status = "PENDING";
  Steady::time_point created;
  SystemClock::time_point inserted;
  json error;  // null, or {"errors": [{"code", "message"}]}
  int http_error_status = 0;
};

FakeGce::FakeGce(FakeGceOptions options)
    : options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()),
      auth_(options_.client_email, options_.token_ttl) {
  // httplib's default pool (8 threads here) holds a worker per kept-alive connection, and
  // zoneOperations.wait holds one for as long as it waits: gcloud storage's parallel ranged
  // downloads and the autoscaler's calls would queue behind them.
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  gcs_ = std::make_unique<FakeGcs>(
      FakeGcsOptions{options_.gcs_data_dir, options_.gcs_page_size, options_.gcs_allow_anonymous},
      FakeGcsHost{[this] { return base_url(); },
                  [this](const std::string& authorization) {
                    std::lock_guard lock(mu_);
                    return auth_.Authorized(authorization);
                  },
                  [this](const std::string& method, const std::string& path) {
                    return AdmitStorageCall(method, path);
                  }});
  Route();
}

FakeGce::~FakeGce() { Stop(); }

void FakeGce::Start(int port) {
  port_ = port == 0 ? server_->bind_to_any_port("127.0.0.1") : port;
  if (port != 0) server_->bind_to_port("127.0.0.1", port);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ticker_ = std::thread([this] {
    while (true) {
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        Advance();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

void FakeGce::Stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
  if (ticker_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    ticker_.join();
  }
  std::lock_guard lock(mu_);
  for (auto& [name, instance] : instances_) instance->boot.Kill();
}

void FakeGce::Route() {
  auto compute = [this](const httplib::Request& req, httplib::Response& res) {
    HandleCompute(req, res);
  };
  server_->Get(R"(/compute/v1/.*)", compute);
  server_->Post(R"(/compute/v1/.*)", compute);
  server_->Delete(R"(/compute/v1/.*)", compute);
  server_->Post("/token", [this](const httplib::Request& req, httplib::Response& res) {
    HandleToken(req, res);
  });
  server_->Get(R"(/computeMetadata/v1/(.*))",
               [this](const httplib::Request& req, httplib::Response& res) {
                 HandleMetadata(req, res, "", req.matches[1]);
               });
  server_->Get(R"(/meta/([^/]+)/computeMetadata/v1/(.*))",
               [this](const httplib::Request& req, httplib::Response& res) {
                 HandleMetadata(req, res, req.matches[1], req.matches[2]);
               });
  auto admin = [this](const httplib::Request& req, httplib::Response& res) {
    HandleAdmin(req, res);
  };
  server_->Post(R"(/_fake/.*)", admin);
  server_->Get(R"(/_fake/.*)", admin);
  gcs_->Route(*server_);
}

json FakeGce::ServiceAccountKey() const { return auth_.KeyFile(options_.project, token_uri()); }

json FakeGce::AuthorizedUserFile() const { return auth_.AuthorizedUserFile(token_uri()); }

void FakeGce::WriteServiceAccountKey(const std::filesystem::path& path) const {
  std::ofstream(path) << ServiceAccountKey().dump(2) << "\n";
}

std::string FakeGce::ZoneUrl() const {
  return compute_endpoint() + "projects/" + options_.project + "/zones/" + options_.zone;
}

void FakeGce::HandleToken(const httplib::Request& request, httplib::Response& response) {
  std::lock_guard lock(mu_);
  auto& faults = faults_["oauth2.token"];
  if (!faults.empty()) {
    Fault& fault = faults.front();
    response.status = fault.status;
    response.set_content(json{{"error", fault.reason}}.dump(), "application/json");
    if (--fault.times <= 0) faults.erase(faults.begin());
    return;
  }
  const FakeGoogleAuth::Answer answer = auth_.Exchange(request.body, token_uri());
  response.status = answer.status;
  response.set_content(answer.body.dump(), "application/json");
}

void FakeGce::HandleMetadata(const httplib::Request& request, httplib::Response& response,
                             const std::string& instance, const std::string& path) {
  response.set_header("Metadata-Flavor", "Google");
  if (request.get_header_value("Metadata-Flavor") != "Google") {
    response.status = 403;
    response.set_content("Missing Metadata-Flavor:Google header.", "text/plain");
    return;
  }
  std::lock_guard lock(mu_);
  std::string text;
  if (path == "project/project-id") {
    text = options_.project;
  } else if (path == "instance/zone") {
    text = "projects/123456789012/zones/" + options_.zone;
  } else if (path == "instance/name") {
    text = instance.empty() ? "det-fake-master" : instance;
  } else if (path == "instance/preempted") {
    Advance();
    auto it = instances_.find(instance);
    text = it != instances_.end() && it->second->preempted_until ? "TRUE" : "FALSE";
  } else if (path == "instance/service-accounts/default/email") {
    text = auth_.client_email();
  } else if (path == "instance/service-accounts/default/token") {
    response.set_content(auth_.MetadataToken().body.dump(), "application/json");
    return;
  } else if (path.starts_with("instance/attributes/") && instances_.contains(instance)) {
    const auto& metadata = instances_.at(instance)->metadata;
    auto it = metadata.find(path.substr(20));
    if (it != metadata.end()) text = it->second;
  }
  if (text.empty() || (!instance.empty() && !instances_.contains(instance))) {
    response.status = 404;
    response.set_content("Not Found", "text/plain");
    return;
  }
  response.set_content(text, "application/text");
}

void FakeGce::HandleCompute(const httplib::Request& request, httplib::Response& response) {
  const std::vector<std::string> parts = SplitPath(request.path.substr(strlen("/compute/v1/")));
  Reply reply;
  std::string method;
  bool wait = false;
  {
    std::lock_guard lock(mu_);
    Advance();
    if (!auth_.Authorized(request.get_header_value("Authorization"))) {
      reply = ErrorReply(401, "authError",
                         "Request had invalid authentication credentials. Expected OAuth 2 access "
                         "token, login cookie or other valid authentication credential.");
    } else {
      reply = Dispatch(request.method, parts, request, &method);
      wait = method == "zoneOperations.wait" && reply.first == 200;
      calls_.push_back({{"method", method}, {"path", request.path}});
    }
  }
  if (wait) reply = WaitOperation(parts.back() == "wait" ? parts[parts.size() - 2] : "");
  response.status = reply.first;
  response.set_content(reply.second.dump(), "application/json; charset=UTF-8");
}

FakeGce::Reply FakeGce::Dispatch(const std::string& http_method,
                                 const std::vector<std::string>& parts,
                                 const httplib::Request& request, std::string* method) {
  if (parts.size() < 2 || parts[0] != "projects" || parts[1] != options_.project) {
    *method = "unknown";
    return ErrorReply(404, "notFound", "The resource '" + JoinPath(parts) + "' was not found");
  }
  const size_t n = parts.size();
  const bool zonal = n >= 4 && parts[2] == "zones";
  if (n == 2) *method = "projects.get";
  if (n == 4 && zonal) *method = "zones.get";
  if (n == 4 && parts[2] == "aggregated" && parts[3] == "instances")
    *method = "instances.aggregatedList";
  if (n == 5 && zonal && parts[4] == "instances") {
    *method = http_method == "POST" ? "instances.insert" : "instances.list";
  }
  if (n == 6 && zonal && parts[4] == "instances") {
    *method = http_method == "DELETE" ? "instances.delete" : "instances.get";
  }
  if (n == 6 && zonal && parts[4] == "operations") *method = "zoneOperations.get";
  if (n == 7 && zonal && parts[4] == "operations" && parts[6] == "wait") {
    *method = "zoneOperations.wait";
  }
  if (method->empty()) {
    *method = "unknown";
    return ErrorReply(404, "notFound", "no such Compute Engine method: " + request.path);
  }
  if (zonal && parts[3] != options_.zone) {
    return ErrorReply(
        404, "notFound",
        "The resource 'projects/" + options_.project + "/zones/" + parts[3] + "' was not found");
  }
  if (const std::optional<Fault> fault = TakeFault(*method)) {
    return ErrorReply(fault->status, fault->reason, "scripted fault: " + fault->reason);
  }
  if (*method == "projects.get") {
    return {200,
            {{"kind", "compute#project"},
             {"name", options_.project},
             {"defaultServiceAccount", "123456789012-compute@developer.gserviceaccount.com"}}};
  }
  if (*method == "zones.get")
    return {200, {{"kind", "compute#zone"}, {"name", options_.zone}, {"status", "UP"}}};
  if (*method == "instances.aggregatedList") return List(request, true);
  if (*method == "instances.list") return List(request, false);
  if (*method == "instances.insert") return Insert(request);
  if (*method == "instances.get") return Get(parts[5]);
  if (*method == "instances.delete") return Delete(parts[5], request);
  return GetOperation(parts[5]);  // zoneOperations.get and .wait (which then blocks)
}

std::optional<FakeGce::Fault> FakeGce::TakeFault(const std::string& method) {
  auto it = faults_.find(method);
  if (it == faults_.end() || it->second.empty()) return std::nullopt;
  Fault& fault = it->second.front();
  const Fault taken = fault;
  if (--fault.times <= 0) it->second.erase(it->second.begin());
  return taken;
}

std::optional<std::pair<int, std::string>> FakeGce::AdmitStorageCall(const std::string& method,
                                                                     const std::string& path) {
  constexpr size_t kMaxStorageCalls = 100000;  // a test's worth; more are not recorded
  std::lock_guard lock(mu_);
  if (calls_.size() < kMaxStorageCalls) calls_.push_back({{"method", method}, {"path", path}});
  const std::optional<Fault> fault = TakeFault(method);
  if (!fault) return std::nullopt;
  return std::make_pair(fault->status, fault->reason);
}

FakeGce::Operation& FakeGce::NewOperation(const std::string& type, const std::string& target) {
  auto operation = std::make_unique<Operation>();
  operation->name = "operation-" + std::to_string(next_id_++) + "-" + type;
  operation->type = type;
  operation->target = target;
  operation->created = Steady::now();
  operation->inserted = SystemClock::now();
  Operation& made = *operation;
  operations_[made.name] = std::move(operation);
  return made;
}

FakeGce::Reply FakeGce::Insert(const httplib::Request& request) {
  const json resource = json::parse(request.body, nullptr, false);
  if (std::string why = InvalidInsert(resource); !why.empty()) {
    return ErrorReply(400, "invalid", why);
  }
  const std::string request_id = request.get_param_value("requestId");
  if (!request_id.empty() && request_ids_.contains(request_id)) {
    return {200, OperationJson(*operations_.at(request_ids_.at(request_id)))};  // idempotent
  }
  const std::string name = resource["name"];
  if (instances_.contains(name)) {
    return ErrorReply(409, "alreadyExists",
                      "The resource 'projects/" + options_.project + "/zones/" + options_.zone +
                          "/instances/" + name + "' already exists");
  }
  const json scheduling = resource.value("scheduling", json::object());
  const std::string model = scheduling.value("provisioningModel", "STANDARD");
  Operation& operation = NewOperation("insert", name);
  if (!request_id.empty()) request_ids_[request_id] = operation.name;
  for (auto it = operation_faults_.begin(); it != operation_faults_.end(); ++it) {
    if (!it->provisioning_model.empty() && it->provisioning_model != model) continue;
    operation.error = {{"errors", {{{"code", it->code}, {"message", it->message}}}}};
    operation.http_error_status = it->code.starts_with("ZONE_RESOURCE_POOL") ? 503 : 403;
    if (--it->times <= 0) operation_faults_.erase(it);
    return {200, OperationJson(operation)};  // no instance: the operation fails
  }
  auto instance = std::make_unique<Instance>();
  instance->name = name;
  instance->index = static_cast<int>(next_id_++);
  instance->id = std::to_string(4000000000000000000ULL + next_id_);
  instance->machine_type = LastPart(resource.value("machineType", ""));
  const json labels = resource.value("labels", json::object());  // outlives the loop's items()
  for (const auto& [key, value] : labels.items()) {
    instance->labels[key] = value.get<std::string>();
  }
  for (const json& item :
       resource.value("metadata", json::object()).value("items", json::array())) {
    instance->metadata[item.value("key", "")] = item.value("value", "");
  }
  instance->provisioning_model = model;
  instance->preemptible = scheduling.value("preemptible", false);
  instance->termination_action = scheduling.value("instanceTerminationAction", "");
  instance->created = SystemClock::now();
  instance->resource = resource;
  instances_[name] = std::move(instance);
  return {200, OperationJson(operation)};
}

FakeGce::Reply FakeGce::List(const httplib::Request& request, bool aggregated) {
  const std::string filter = request.get_param_value("filter");
  std::vector<json> matching;
  for (const auto& [name, instance] : instances_) {
    if (FilterMatches(filter, instance->labels, instance->status)) {
      matching.push_back(InstanceJson(*instance));
    }
  }
  size_t page = options_.page_size;
  if (request.has_param("maxResults")) {
    page = std::min<size_t>(page, std::stoul(request.get_param_value("maxResults")));
  }
  const size_t offset =
      request.has_param("pageToken") ? std::stoul(request.get_param_value("pageToken")) : 0;
  json items = json::array();
  for (size_t i = offset; i < matching.size() && i < offset + page; ++i)
    items.push_back(matching[i]);
  json reply = {{"kind", aggregated ? "compute#instanceAggregatedList" : "compute#instanceList"},
                {"id", "projects/" + options_.project + "/zones/" + options_.zone + "/instances"},
                {"selfLink", ZoneUrl() + "/instances"}};
  if (offset + page < matching.size()) reply["nextPageToken"] = std::to_string(offset + page);
  if (aggregated) {
    json scope = items.empty() ? json{{"warning",
                                       {{"code", "NO_RESULTS_ON_PAGE"},
                                        {"message", "There are no results for scope 'zones/" +
                                                        options_.zone + "' on this page."}}}}
                               : json{{"instances", items}};
    reply["items"] = {{"zones/" + options_.zone, scope}};
  } else if (!items.empty()) {
    reply["items"] = items;
  }
  return {200, reply};
}

FakeGce::Reply FakeGce::Get(const std::string& name) {
  auto it = instances_.find(name);
  if (it == instances_.end()) {
    return ErrorReply(404, "notFound",
                      "The resource 'projects/" + options_.project + "/zones/" + options_.zone +
                          "/instances/" + name + "' was not found");
  }
  return {200, InstanceJson(*it->second)};
}

FakeGce::Reply FakeGce::Delete(const std::string& name, const httplib::Request& request) {
  const std::string request_id = request.get_param_value("requestId");
  if (!request_id.empty() && request_ids_.contains(request_id)) {
    return {200, OperationJson(*operations_.at(request_ids_.at(request_id)))};
  }
  auto it = instances_.find(name);
  if (it == instances_.end()) return Get(name);
  if (it->second->status == "PROVISIONING" || it->second->status == "STOPPING") {
    // As Compute Engine: an instance its insert is still creating, or one being deleted.
    return ErrorReply(400, "resourceNotReady",
                      "The resource 'projects/" + options_.project + "/zones/" + options_.zone +
                          "/instances/" + name + "' is not ready");
  }
  it->second->status = "STOPPING";
  it->second->boot.Kill();
  Operation& operation = NewOperation("delete", name);
  if (!request_id.empty()) request_ids_[request_id] = operation.name;
  return {200, OperationJson(operation)};
}

FakeGce::Reply FakeGce::GetOperation(const std::string& name) {
  auto it = operations_.find(name);
  if (it == operations_.end()) {
    return ErrorReply(404, "notFound",
                      "The resource 'projects/" + options_.project + "/zones/" + options_.zone +
                          "/operations/" + name + "' was not found");
  }
  return {200, OperationJson(*it->second)};
}

FakeGce::Reply FakeGce::WaitOperation(const std::string& name) {
  const auto deadline = Steady::now() + std::chrono::minutes(2);
  while (true) {
    {
      std::lock_guard lock(mu_);
      Advance();
      Reply reply = GetOperation(name);
      if (reply.first != 200 || reply.second["status"] == "DONE" || Steady::now() >= deadline ||
          stopping_) {
        return reply;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void FakeGce::Advance() {
  const auto now = Steady::now();
  for (auto& [name, instance] : instances_) instance->boot.Reap();
  for (auto& [name, operation] : operations_) {
    if (operation->status == "DONE" || operations_held_) continue;
    if (now - operation->created < options_.operation_delay) {
      if (now - operation->created >= options_.operation_delay / 2) operation->status = "RUNNING";
      continue;
    }
    operation->status = "DONE";
    auto target = instances_.find(operation->target);
    if (target == instances_.end() || !operation->error.is_null()) continue;
    if (operation->type == "insert" && target->second->status == "PROVISIONING") {
      target->second->status = "STAGING";
      target->second->staged_at = now;
    } else if (operation->type == "delete") {
      target->second->boot.Kill();
      instances_.erase(target);
    }
  }
  for (auto it = instances_.begin(); it != instances_.end();) {
    auto next = std::next(it);
    if (it->second->preempted_until && now >= *it->second->preempted_until) EndPreempted(it);
    it = next;
  }
  for (auto& [name, instance] : instances_) {
    if (instance->status == "STAGING" && now - instance->staged_at >= options_.boot_delay) {
      instance->status = "RUNNING";
      if (options_.boot_startup_script) Boot(*instance);
    }
  }
}

void FakeGce::Boot(Instance& instance) {
  auto script = instance.metadata.find("startup-script");
  if (script == instance.metadata.end()) return;
  const std::filesystem::path dir = options_.work_dir / instance.name;
  instance.boot.Start(dir, "startup-script.sh", script->second,
                      {{"DET_GCE_METADATA_HOST", metadata_host() + "/meta/" + instance.name},
                       {"DET_AGENT_DIR", dir.string()}});
}

json FakeGce::InstanceJson(const Instance& instance) const {
  const std::string project = compute_endpoint() + "projects/" + options_.project;
  json scheduling = {{"provisioningModel", instance.provisioning_model},
                     {"preemptible", instance.preemptible},
                     {"onHostMaintenance", "TERMINATE"},
                     {"automaticRestart", false}};
  if (!instance.termination_action.empty()) {
    scheduling["instanceTerminationAction"] = instance.termination_action;
  }
  json metadata_items = json::array();
  for (const auto& [key, value] : instance.metadata) {
    metadata_items.push_back({{"key", key}, {"value", value}});
  }
  json nic = {{"name", "nic0"},
              {"network", project + "/global/networks/default"},
              {"networkIP", "10.128.0." + std::to_string(instance.index % 250 + 2)}};
  return {{"kind", "compute#instance"},
          {"id", instance.id},
          {"name", instance.name},
          {"creationTimestamp", Rfc3339(instance.created)},
          {"zone", ZoneUrl()},
          {"machineType", ZoneUrl() + "/machineTypes/" + instance.machine_type},
          {"status", instance.status},
          {"labels", instance.labels},
          {"labelFingerprint", "42WmSpB8rSM="},
          {"metadata", {{"kind", "compute#metadata"}, {"items", metadata_items}}},
          {"scheduling", scheduling},
          {"networkInterfaces", {nic}},
          {"disks", instance.resource.value("disks", json::array())},
          {"guestAccelerators", instance.resource.value("guestAccelerators", json::array())},
          {"selfLink", ZoneUrl() + "/instances/" + instance.name}};
}

json FakeGce::OperationJson(const Operation& operation) const {
  json reply = {{"kind", "compute#operation"},
                {"id", std::to_string(7000000000000000000ULL +
                                      operation.created.time_since_epoch().count() % 1000000)},
                {"name", operation.name},
                {"zone", ZoneUrl()},
                {"operationType", operation.type},
                {"targetLink", ZoneUrl() + "/instances/" + operation.target},
                {"status", operation.status},
                {"user", options_.client_email},
                {"progress", operation.status == "DONE" ? 100 : 0},
                {"insertTime", Rfc3339(operation.inserted)},
                {"selfLink", ZoneUrl() + "/operations/" + operation.name}};
  if (operation.status == "DONE" && !operation.error.is_null()) {
    reply["error"] = operation.error;
    reply["httpErrorStatusCode"] = operation.http_error_status;
    reply["httpErrorMessage"] =
        operation.http_error_status == 503 ? "SERVICE UNAVAILABLE" : "FORBIDDEN";
  }
  return reply;
}

void FakeGce::HandleAdmin(const httplib::Request& request, httplib::Response& response) {
  const json body = json::parse(request.body.empty() ? "{}" : request.body, nullptr, false);
  const std::string what = request.path.substr(strlen("/_fake/"));
  json reply = {{"ok", true}};
  if (what == "fault") {
    InjectFault(body.value("method", ""), body.value("status", 503),
                body.value("reason", "backendError"), body.value("times", 1));
  } else if (what == "operation_error") {
    InjectOperationError(body.value("code", "ZONE_RESOURCE_POOL_EXHAUSTED"),
                         body.value("message",
                                    "The zone does not have enough resources "
                                    "available to fulfill the request."),
                         body.value("times", 1), body.value("provisioning_model", ""));
  } else if (what == "preempt") {
    reply["ok"] =
        Preempt(body.value("name", ""), std::chrono::milliseconds(body.value("notice_ms", 0)));
  } else if (what == "revoke_tokens") {
    RevokeTokens();
  } else if (what == "state") {
    reply = State();
  } else if (what == "calls") {
    reply = Calls();
  } else if (std::optional<json> answer =
                 what.starts_with("gcs/") ? gcs_->Admin(what.substr(4), request) : std::nullopt) {
    reply = std::move(*answer);
  } else {
    response.status = 404;
    reply = {{"error", "unknown admin endpoint " + what}};
  }
  response.set_content(reply.dump(), "application/json");
}

void FakeGce::InjectFault(const std::string& method, int status, const std::string& reason,
                          int times) {
  std::lock_guard lock(mu_);
  faults_[method].push_back({status, reason, times});
}

void FakeGce::InjectOperationError(const std::string& code, const std::string& message, int times,
                                   const std::string& provisioning_model) {
  std::lock_guard lock(mu_);
  operation_faults_.push_back({code, message, times, provisioning_model});
}

void FakeGce::HoldOperations(bool held) {
  std::lock_guard lock(mu_);
  operations_held_ = held;
}

bool FakeGce::Preempt(const std::string& name, std::chrono::milliseconds notice) {
  std::lock_guard lock(mu_);
  auto it = instances_.find(name);
  if (it == instances_.end()) return false;
  if (notice > std::chrono::milliseconds::zero()) {
    it->second->status = "STOPPING";  // ACPI soft off sent; the guest has until then
    it->second->preempted_until = Steady::now() + notice;
    return true;
  }
  EndPreempted(it);
  return true;
}

void FakeGce::EndPreempted(std::map<std::string, std::unique_ptr<Instance>>::iterator it) {
  it->second->boot.Kill();
  it->second->preempted_until.reset();
  if (it->second->termination_action == "DELETE") {
    instances_.erase(it);
  } else {
    it->second->status = "TERMINATED";
  }
}

void FakeGce::RevokeTokens() {
  std::lock_guard lock(mu_);
  auth_.RevokeAll();
}

json FakeGce::State() {
  std::lock_guard lock(mu_);
  Advance();
  json instances = json::array();
  for (const auto& [name, instance] : instances_) {
    instances.push_back({{"name", name},
                         {"status", instance->status},
                         {"labels", instance->labels},
                         {"machine_type", instance->machine_type},
                         {"provisioning_model", instance->provisioning_model},
                         {"preemptible", instance->preemptible},
                         {"booted", instance->boot.running()},
                         {"resource", instance->resource}});
  }
  json operations = json::array();
  for (const auto& [name, operation] : operations_) {
    operations.push_back({{"name", name},
                          {"type", operation->type},
                          {"target", operation->target},
                          {"status", operation->status},
                          {"error", operation->error}});
  }
  return {{"instances", instances}, {"operations", operations}};
}

json FakeGce::Calls() {
  std::lock_guard lock(mu_);
  return calls_;
}

int FakeGce::CallCount(const std::string& method) {
  std::lock_guard lock(mu_);
  int count = 0;
  for (const json& call : calls_) count += call["method"] == method ? 1 : 0;
  return count;
}

int FakeGce::tokens_issued() {
  std::lock_guard lock(mu_);
  return auth_.tokens_issued();
}

}  // namespace det::testing
