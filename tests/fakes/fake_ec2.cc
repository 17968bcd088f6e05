#include "tests/fakes/fake_ec2.h"

#include <httplib.h>

#include <ctime>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "common/base64.h"
#include "common/http_client.h"
#include "tests/fakes/booted_script.h"
#include "tests/fakes/fake_aws_auth.h"
#include "tests/fakes/fake_xml.h"

namespace det::testing {
namespace {

using Params = std::map<std::string, std::string>;

std::string Document(const std::string& action, const std::string& inner) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<" + action +
         "Response xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">" +
         Element("requestId", "fake-request") + inner + "</" + action + "Response>";
}

std::string ErrorDocument(const std::string& code, const std::string& message) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error>" +
         Element("Code", code) + Element("Message", message) +
         "</Error></Errors><RequestID>fake-request</RequestID></Response>";
}

// Values of "Name.1", "Name.2", ...
std::vector<std::string> ListParam(const Params& params, const std::string& name) {
  std::vector<std::string> values;
  for (int i = 1; params.contains(name + "." + std::to_string(i)); ++i) {
    values.push_back(params.at(name + "." + std::to_string(i)));
  }
  return values;
}

std::string Param(const Params& params, const std::string& name, const std::string& fallback = "") {
  auto it = params.find(name);
  return it == params.end() ? fallback : it->second;
}

using Tags = std::vector<std::pair<std::string, std::string>>;

Tags TagSpecification(const Params& params, const std::string& resource_type) {
  Tags tags;
  for (int spec = 1; params.contains("TagSpecification." + std::to_string(spec) + ".ResourceType");
       ++spec) {
    const std::string prefix = "TagSpecification." + std::to_string(spec) + ".";
    if (params.at(prefix + "ResourceType") != resource_type) continue;
    for (int i = 1; params.contains(prefix + "Tag." + std::to_string(i) + ".Key"); ++i) {
      const std::string tag = prefix + "Tag." + std::to_string(i) + ".";
      tags.emplace_back(params.at(tag + "Key"), Param(params, tag + "Value"));
    }
  }
  return tags;
}

std::string TagSetXml(const Tags& tags) {
  std::string xml = "<tagSet>";
  for (const auto& [key, value] : tags) {
    xml += "<item>" + Element("key", key) + Element("value", value) + "</item>";
  }
  return xml + "</tagSet>";
}

// Filter.N.Name / Filter.N.Value.M as name → allowed values.
std::map<std::string, std::set<std::string>> Filters(const Params& params) {
  std::map<std::string, std::set<std::string>> filters;
  for (int i = 1; params.contains("Filter." + std::to_string(i) + ".Name"); ++i) {
    const std::string prefix = "Filter." + std::to_string(i) + ".";
    std::vector<std::string> values = ListParam(params, prefix + "Value");
    filters[params.at(prefix + "Name")].insert(values.begin(), values.end());
  }
  return filters;
}

bool Matches(const std::map<std::string, std::set<std::string>>& filters, const Tags& tags,
             const std::map<std::string, std::string>& attributes) {
  for (const auto& [name, values] : filters) {
    std::string actual;
    bool present = false;
    if (name.starts_with("tag:")) {
      for (const auto& [key, value] : tags) {
        if (key == name.substr(4)) {
          actual = value;
          present = true;
        }
      }
    } else if (auto it = attributes.find(name); it != attributes.end()) {
      actual = it->second;
      present = true;
    }
    if (!present || !values.contains(actual)) return false;
  }
  return true;
}

int StateCode(const std::string& state) {
  static const std::map<std::string, int> kCodes = {{"pending", 0},        {"running", 16},
                                                    {"shutting-down", 32}, {"terminated", 48},
                                                    {"stopping", 64},      {"stopped", 80}};
  return kCodes.at(state);
}

std::string Hex(int value, int width) {
  char text[32];
  std::snprintf(text, sizeof(text), "%0*x", width, value);
  return text;
}

std::string RandomIdRealm() {
  std::random_device random;
  return Hex(static_cast<int>(random() & 0xffff), 4);
}

}  // namespace

struct FakeEc2::Instance {
  std::string id;
  std::string reservation;
  std::string state = "pending";
  std::string image_id;
  std::string instance_type;
  std::string key_name;
  std::string zone;
  std::string user_data;
  bool spot = false;
  std::string spot_request_id;
  WallTime launched;
  // EC2's list lags: DescribeInstances leaves the instance out (and answers NotFound by id)
  // before this.
  WallTime visible_at;
  // A spot interruption notice: EC2 reclaims the instance at this time (IMDS
  // spot/instance-action says so meanwhile); epoch: none.
  WallTime reclaim_at{};
  Tags tags;
  Params launch_params;  // what it was launched with, for tests
  BootedScript boot;     // the booted user data
  int index = 0;
  // Its metadata options: EC2's defaults (IMDSv1 allowed, hop limit 1) unless RunInstances or
  // ModifyInstanceMetadataOptions said otherwise.
  std::string metadata_tokens = "optional";
  std::string metadata_hop_limit = "1";

  std::string MetadataOptionsXml(const std::string& state) const {
    return Element("state", state) + Element("httpTokens", metadata_tokens) +
           Element("httpPutResponseHopLimit", metadata_hop_limit) +
           Element("httpEndpoint", "enabled") + Element("httpProtocolIpv6", "disabled") +
           Element("instanceMetadataTags", "disabled");
  }

  std::string Xml() const {
    std::string xml =
        "<item>" + Element("instanceId", id) + Element("imageId", image_id) + "<instanceState>" +
        Element("code", std::to_string(StateCode(state))) + Element("name", state) +
        "</instanceState>" + Element("keyName", key_name) + Element("amiLaunchIndex", "0") +
        Element("instanceType", instance_type) + Element("launchTime", IsoTime(launched)) +
        "<placement>" + Element("availabilityZone", zone) + Element("tenancy", "default") +
        "</placement>" + Element("privateIpAddress", "10.0.0." + std::to_string(index % 250 + 2));
    if (spot) {
      xml +=
          Element("instanceLifecycle", "spot") + Element("spotInstanceRequestId", spot_request_id);
    }
    return xml + TagSetXml(tags) + "<metadataOptions>" + MetadataOptionsXml("applied") +
           "</metadataOptions></item>";
  }
};

struct FakeEc2::SpotRequest {
  std::string id;
  std::string state = "open";
  std::string status_code = "pending-evaluation";
  std::string status_message = "Your Spot request has been submitted for review.";
  std::string instance_type;
  std::string instance_id;
  std::string spot_price;
  Params params;
  WallTime created;
  Tags tags;

  std::string Xml(const std::string& zone) const {
    std::string xml = "<item>" + Element("spotInstanceRequestId", id) +
                      (spot_price.empty() ? "" : Element("spotPrice", spot_price)) +
                      Element("type", "one-time") + Element("state", state) + "<status>" +
                      Element("code", status_code) + Element("updateTime", IsoTime(created)) +
                      Element("message", status_message) + "</status><launchSpecification>" +
                      Element("imageId", Param(params, "LaunchSpecification.ImageId")) +
                      Element("keyName", Param(params, "LaunchSpecification.KeyName")) +
                      Element("instanceType", instance_type) + "</launchSpecification>" +
                      Element("createTime", IsoTime(created)) +
                      Element("productDescription", "Linux/UNIX") + TagSetXml(tags) +
                      Element("instanceInterruptionBehavior", "terminate");
    if (!instance_id.empty()) {
      xml += Element("instanceId", instance_id) + Element("launchedAvailabilityZone", zone);
    }
    return xml + "</item>";
  }
};

FakeEc2::FakeEc2(FakeEc2Options options)
    : options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()),
      id_realm_(RandomIdRealm()) {
  Route();
}

FakeEc2::~FakeEc2() { Stop(); }

void FakeEc2::Start(int port) {
  port_ = port == 0 ? server_->bind_to_any_port(options_.host) : port;
  if (port != 0) server_->bind_to_port(options_.host, port);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() before the accept loop runs would be lost: wait for it.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void FakeEc2::Stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
  std::lock_guard lock(mu_);
  for (auto& [id, instance] : instances_) instance->boot.Kill();
}

void FakeEc2::Route() {
  auto api = [this](const httplib::Request& req, httplib::Response& res) { HandleApi(req, res); };
  server_->Post("/", api);
  server_->Get("/", api);
  auto host_imds = [this](const httplib::Request& req, httplib::Response& res) {
    HandleImds(req, res, "");
  };
  server_->Put("/latest/api/token", host_imds);
  server_->Get(R"(/latest/.*)", host_imds);
  auto instance_imds = [this](const httplib::Request& req, httplib::Response& res) {
    HandleImds(req, res, req.matches[1]);
  };
  server_->Put(R"(/imds/([^/]+)/latest/api/token)", instance_imds);
  server_->Get(R"(/imds/([^/]+)/latest/.*)", instance_imds);
  auto admin = [this](const httplib::Request& req, httplib::Response& res) {
    HandleAdmin(req, res);
  };
  server_->Post(R"(/_fake/.*)", admin);
  server_->Get(R"(/_fake/.*)", admin);
}

void FakeEc2::HandleApi(const httplib::Request& request, httplib::Response& response) {
  const std::optional<AwsAuthFailure> refused = VerifyAwsSignature(
      request, {options_.access_key_id, options_.secret_access_key, options_.region, "ec2"});
  if (refused) {
    response.status = refused->code == "SignatureDoesNotMatch" ? 403 : 401;
    response.set_content(ErrorDocument(refused->code, refused->message), "text/xml;charset=UTF-8");
    return;
  }
  Params params = FormDecode(request.body);
  const size_t question = request.target.find('?');
  if (question != std::string::npos) params.merge(FormDecode(request.target.substr(question + 1)));
  const std::string action = Param(params, "Action");
  int status = 200;
  std::string body;
  std::optional<Fault> fault;
  {
    std::lock_guard lock(mu_);
    calls_.push_back({{"action", action}, {"params", params}});
    if (auto& faults = faults_[action]; !faults.empty()) {
      fault = faults.front();
      if (--faults.front().times <= 0) faults.erase(faults.begin());
    }
  }
  // A slow call is slow before it acts, as a call that waits in EC2's queue.
  if (fault) std::this_thread::sleep_for(fault->delay);
  {
    std::lock_guard lock(mu_);
    Advance();
    if (fault && !fault->code.empty()) {
      status = fault->status;
      body = ErrorDocument(fault->code, "scripted fault: " + fault->code);
    } else {
      body = Dispatch(action, params, &status);
    }
  }
  response.status = status;
  response.set_content(body, "text/xml;charset=UTF-8");
}

std::string FakeEc2::Dispatch(const std::string& action, const Params& params, int* status) {
  if (action == "RunInstances") return RunInstances(params, status);
  if (action == "DescribeInstances") return DescribeInstances(params, status);
  if (action == "TerminateInstances") return TerminateInstances(params, status);
  if (action == "CreateTags") return CreateTags(params, status);
  if (action == "RequestSpotInstances") return RequestSpotInstances(params, status);
  if (action == "DescribeSpotInstanceRequests") return DescribeSpotInstanceRequests(params, status);
  if (action == "CancelSpotInstanceRequests") return CancelSpotInstanceRequests(params, status);
  if (action == "ModifyInstanceMetadataOptions") {
    return ModifyInstanceMetadataOptions(params, status);
  }
  *status = 400;
  return ErrorDocument("InvalidAction",
                       "The action " + action + " is not valid for this web service.");
}

FakeEc2::Instance& FakeEc2::NewInstance(const Params& params, const std::string& prefix,
                                        bool spot) {
  auto instance = std::make_unique<Instance>();
  instance->index = next_id_++;
  instance->id = "i-0" + id_realm_ + Hex(instance->index, 12);
  instance->image_id = Param(params, prefix + "ImageId");
  instance->instance_type = Param(params, prefix + "InstanceType", "m1.small");
  instance->key_name = Param(params, prefix + "KeyName");
  instance->zone = Param(params, prefix + "Placement.AvailabilityZone", options_.zone);
  Result<std::string> user_data = Base64Decode(Param(params, prefix + "UserData"));
  instance->user_data = user_data.ok() ? *user_data : "";
  instance->spot = spot;
  instance->launched = Now();
  instance->visible_at = instance->launched + instance_visibility_delay_;
  instance->launch_params = params;
  instance->metadata_tokens = Param(params, prefix + "MetadataOptions.HttpTokens", "optional");
  instance->metadata_hop_limit =
      Param(params, prefix + "MetadataOptions.HttpPutResponseHopLimit", "1");
  Instance& ref = *instance;
  instances_[ref.id] = std::move(instance);
  if (options_.boot_user_data && !ref.user_data.empty()) Boot(ref);
  return ref;
}

void FakeEc2::Boot(Instance& instance) {
  const std::filesystem::path dir = options_.work_dir / instance.id;
  std::vector<std::string> wrapper = options_.boot_wrapper;
  if (!wrapper.empty()) wrapper.push_back(instance.id);
  instance.boot.Start(dir, "user-data.sh", instance.user_data,
                      {{"DET_IMDS_ENDPOINT", "http://" + options_.host + ":" +
                                                 std::to_string(port_) + "/imds/" + instance.id},
                       {"DET_AGENT_DIR", dir.string()}},
                      wrapper);
}

void FakeEc2::Reap() {
  for (auto& [id, instance] : instances_) instance->boot.Reap();
}

void FakeEc2::Advance() {
  const auto now = Now();
  Reap();
  for (auto& [id, instance] : instances_) {
    if (instance->state == "pending" && now - instance->launched >= options_.boot_delay) {
      instance->state = "running";
    }
    if (instance->state == "shutting-down") instance->state = "terminated";
    if (instance->reclaim_at != WallTime{} && now >= instance->reclaim_at &&
        (instance->state == "pending" || instance->state == "running")) {
      Reclaim(*instance);
    }
  }
  for (auto& [id, request] : spot_requests_) {
    if (request->state != "open") continue;
    if (!spot_fulfil_) {
      request->status_code = "capacity-not-available";
      request->status_message = "There is no Spot capacity available that matches your request.";
      continue;
    }
    if (now - request->created < spot_delay_) continue;
    Instance& instance = NewInstance(request->params, "LaunchSpecification.", true);
    instance.spot_request_id = request->id;
    request->state = "active";
    request->status_code = "fulfilled";
    request->status_message = "Your spot request is fulfilled.";
    request->instance_id = instance.id;
  }
}

std::string FakeEc2::RunInstances(const Params& params, int* status) {
  const std::string token = Param(params, "ClientToken");
  if (Param(params, "ImageId").empty()) {
    *status = 400;
    return ErrorDocument("MissingParameter", "The request must contain the parameter ImageId");
  }
  const int count = std::stoi(Param(params, "MaxCount", "1"));
  const std::string reservation = "r-0" + id_realm_ + Hex(next_id_, 12);
  std::string items;
  if (!token.empty() && client_tokens_.contains(token)) {
    // Idempotent: a retried call with the same token gets the same reservation.
    for (auto& [id, instance] : instances_) {
      if (instance->reservation == client_tokens_[token]) items += instance->Xml();
    }
  } else {
    if (!token.empty()) client_tokens_[token] = reservation;
    for (int i = 0; i < count; ++i) {
      Instance& instance = NewInstance(params, "", false);
      instance.reservation = reservation;
      instance.tags = TagSpecification(params, "instance");
      items += instance.Xml();
    }
  }
  return Document("RunInstances", Element("reservationId", reservation) +
                                      Element("ownerId", "123456789012") +
                                      "<groupSet/><instancesSet>" + items + "</instancesSet>");
}

std::string FakeEc2::DescribeInstances(const Params& params, int* status) {
  const auto filters = Filters(params);
  const std::vector<std::string> ids = ListParam(params, "InstanceId");
  const auto now = Now();
  for (const std::string& id : ids) {
    if (!instances_.contains(id) || now < instances_[id]->visible_at) {
      *status = 400;
      return ErrorDocument("InvalidInstanceID.NotFound",
                           "The instance ID '" + id + "' does not exist");
    }
  }
  std::vector<const Instance*> matching;
  for (const auto& [id, instance] : instances_) {
    if (!ids.empty() && std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    if (now < instance->visible_at) continue;  // launched, not listed yet
    if (!Matches(filters, instance->tags,
                 {{"instance-state-name", instance->state},
                  {"instance-id", id},
                  {"reservation-id", instance->reservation},
                  {"instance-type", instance->instance_type}})) {
      continue;
    }
    matching.push_back(instance.get());
  }
  const size_t page =
      std::min(options_.page_size,
               std::clamp<size_t>(std::stoul(Param(params, "MaxResults", "1000")), 5, 1000));
  const size_t offset = std::stoul(Param(params, "NextToken", "0"));
  std::string items;
  for (size_t i = offset; i < matching.size() && i < offset + page; ++i) {
    items += "<item>" + Element("reservationId", matching[i]->reservation) +
             Element("ownerId", "123456789012") + "<groupSet/><instancesSet>" + matching[i]->Xml() +
             "</instancesSet></item>";
  }
  const std::string next =
      offset + page < matching.size() ? Element("nextToken", std::to_string(offset + page)) : "";
  return Document("DescribeInstances", "<reservationSet>" + items + "</reservationSet>" + next);
}

std::string FakeEc2::TerminateInstances(const Params& params, int* status) {
  const std::vector<std::string> ids = ListParam(params, "InstanceId");
  for (const std::string& id : ids) {
    if (!instances_.contains(id)) {
      *status = 400;
      return ErrorDocument("InvalidInstanceID.NotFound",
                           "The instance ID '" + id + "' does not exist");
    }
  }
  std::string items;
  for (const std::string& id : ids) {
    Instance& instance = *instances_[id];
    const std::string previous = instance.state;
    if (instance.state != "terminated") instance.state = "shutting-down";
    instance.boot.Kill();
    if (auto request = spot_requests_.find(instance.spot_request_id);
        request != spot_requests_.end() && request->second->state == "active") {
      request->second->state = "closed";  // a one-time request ends with its instance
      request->second->status_code = "instance-terminated-by-user";
    }
    items += "<item>" + Element("instanceId", id) + "<currentState>" +
             Element("code", std::to_string(StateCode(instance.state))) +
             Element("name", instance.state) + "</currentState><previousState>" +
             Element("code", std::to_string(StateCode(previous))) + Element("name", previous) +
             "</previousState></item>";
  }
  return Document("TerminateInstances", "<instancesSet>" + items + "</instancesSet>");
}

std::string FakeEc2::CreateTags(const Params& params, int* status) {
  const std::vector<std::string> ids = ListParam(params, "ResourceId");
  Tags tags;
  for (int i = 1; params.contains("Tag." + std::to_string(i) + ".Key"); ++i) {
    tags.emplace_back(params.at("Tag." + std::to_string(i) + ".Key"),
                      Param(params, "Tag." + std::to_string(i) + ".Value"));
  }
  for (const std::string& id : ids) {
    Tags* target = nullptr;
    if (auto it = instances_.find(id); it != instances_.end()) target = &it->second->tags;
    if (auto it = spot_requests_.find(id); it != spot_requests_.end()) target = &it->second->tags;
    if (target == nullptr) {
      *status = 400;
      return ErrorDocument(id.starts_with("sir-") ? "InvalidSpotInstanceRequestID.NotFound"
                                                  : "InvalidInstanceID.NotFound",
                           "The ID '" + id + "' does not exist");
    }
    for (const auto& tag : tags) {
      std::erase_if(*target, [&](const auto& t) { return t.first == tag.first; });
      target->push_back(tag);
    }
  }
  return Document("CreateTags", Element("return", "true"));
}

std::string FakeEc2::ModifyInstanceMetadataOptions(const Params& params, int* status) {
  const std::string id = Param(params, "InstanceId");
  auto it = instances_.find(id);
  if (it == instances_.end() || Now() < it->second->visible_at) {
    *status = 400;
    return ErrorDocument("InvalidInstanceID.NotFound",
                         "The instance ID '" + id + "' does not exist");
  }
  Instance& instance = *it->second;
  const std::string tokens = Param(params, "HttpTokens", instance.metadata_tokens);
  const std::string hops = Param(params, "HttpPutResponseHopLimit", instance.metadata_hop_limit);
  const bool hops_valid = !hops.empty() && hops.size() <= 2 &&
                          hops.find_first_not_of("0123456789") == std::string::npos &&
                          std::stoi(hops) >= 1 && std::stoi(hops) <= 64;
  if ((tokens != "optional" && tokens != "required") || !hops_valid) {
    *status = 400;
    return ErrorDocument("InvalidParameterValue",
                         "Invalid value for HttpTokens or HttpPutResponseHopLimit");
  }
  instance.metadata_tokens = tokens;
  instance.metadata_hop_limit = hops;
  return Document("ModifyInstanceMetadataOptions",
                  Element("instanceId", id) + "<instanceMetadataOptions>" +
                      instance.MetadataOptionsXml("pending") + "</instanceMetadataOptions>");
}

std::string FakeEc2::RequestSpotInstances(const Params& params, int* status) {
  if (Param(params, "LaunchSpecification.ImageId").empty()) {
    *status = 400;
    return ErrorDocument("MissingParameter",
                         "The request must contain the parameter LaunchSpecification.ImageId");
  }
  const int count = std::stoi(Param(params, "InstanceCount", "1"));
  std::string items;
  for (int i = 0; i < count; ++i) {
    auto request = std::make_unique<SpotRequest>();
    request->id = "sir-" + Hex(next_id_++, 8);
    request->instance_type = Param(params, "LaunchSpecification.InstanceType", "m1.small");
    request->spot_price = Param(params, "SpotPrice");
    request->params = params;
    request->created = Now();
    request->tags = TagSpecification(params, "spot-instances-request");
    items += request->Xml(options_.zone);
    spot_requests_[request->id] = std::move(request);
  }
  return Document("RequestSpotInstances",
                  "<spotInstanceRequestSet>" + items + "</spotInstanceRequestSet>");
}

std::string FakeEc2::DescribeSpotInstanceRequests(const Params& params, int* status) {
  const auto filters = Filters(params);
  const std::vector<std::string> ids = ListParam(params, "SpotInstanceRequestId");
  const auto now = Now();
  for (const std::string& id : ids) {
    // Eventual consistency: by id too, a new request does not exist yet for a while.
    if (!spot_requests_.contains(id) ||
        now - spot_requests_[id]->created < spot_visibility_delay_) {
      *status = 400;
      return ErrorDocument("InvalidSpotInstanceRequestID.NotFound",
                           "The spot instance request ID '" + id + "' does not exist");
    }
  }
  std::string items;
  for (const auto& [id, request] : spot_requests_) {
    if (!ids.empty() && std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    // Eventual consistency: a new request is not listed for a while.
    if (ids.empty() && now - request->created < spot_visibility_delay_) continue;
    if (!Matches(filters, request->tags,
                 {{"state", request->state},
                  {"spot-instance-request-id", id},
                  {"instance-id", request->instance_id}})) {
      continue;
    }
    items += request->Xml(options_.zone);
  }
  return Document("DescribeSpotInstanceRequests",
                  "<spotInstanceRequestSet>" + items + "</spotInstanceRequestSet>");
}

std::string FakeEc2::CancelSpotInstanceRequests(const Params& params, int* status) {
  const std::vector<std::string> ids = ListParam(params, "SpotInstanceRequestId");
  const auto now = Now();
  std::string items;
  for (const std::string& id : ids) {
    auto it = spot_requests_.find(id);
    if (it == spot_requests_.end() || now - it->second->created < spot_visibility_delay_) {
      *status = 400;
      return ErrorDocument("InvalidSpotInstanceRequestID.NotFound",
                           "The spot instance request ID '" + id + "' does not exist");
    }
    if (it->second->state == "open" || it->second->state == "active") {
      it->second->state = "cancelled";
      it->second->status_code = "request-canceled-and-instance-running";
      if (it->second->instance_id.empty()) it->second->status_code = "canceled-before-fulfillment";
    }
    items +=
        "<item>" + Element("spotInstanceRequestId", id) + Element("state", "cancelled") + "</item>";
  }
  return Document("CancelSpotInstanceRequests",
                  "<spotInstanceRequestSet>" + items + "</spotInstanceRequestSet>");
}

void FakeEc2::HandleImds(const httplib::Request& request, httplib::Response& response,
                         const std::string& instance_id) {
  std::lock_guard lock(mu_);
  if (request.method == "PUT") {
    if (request.get_header_value("X-aws-ec2-metadata-token-ttl-seconds").empty()) {
      response.status = 400;
      return;
    }
    const std::string token = "imds-token-" + std::to_string(imds_tokens_.size() + 1);
    imds_tokens_.insert(token);
    response.set_content(token, "text/plain");
    return;
  }
  if (!imds_tokens_.contains(request.get_header_value("X-aws-ec2-metadata-token"))) {
    response.status = 401;  // IMDSv2 required: no v1 answers
    return;
  }
  const std::string path = request.path.substr(request.path.find("/latest/"));
  std::string id = instance_id.empty() ? "i-0fa4e000000000host" : instance_id;
  if (!instance_id.empty()) {
    auto it = instances_.find(instance_id);
    if (it == instances_.end() || it->second->state == "terminated") {
      response.status = 404;
      return;
    }
  }
  const std::string role_path = "/latest/meta-data/iam/security-credentials/";
  Advance();  // a notice that ran out ends the instance before it is asked about
  if (!instance_id.empty() && path == "/latest/meta-data/spot/instance-action") {
    const Instance& instance = *instances_.at(instance_id);
    if (instance.reclaim_at == WallTime{}) {
      response.status = 404;
    } else {
      response.set_content(
          nlohmann::json{{"action", "terminate"}, {"time", IsoTime(instance.reclaim_at)}}.dump(),
          "application/json");
    }
  } else if (path == "/latest/meta-data/instance-id") {
    response.set_content(id, "text/plain");
  } else if (path == "/latest/dynamic/instance-identity/document") {
    response.set_content(
        nlohmann::json{
            {"instanceId", id}, {"region", options_.region}, {"availabilityZone", options_.zone}}
            .dump(),
        "application/json");
  } else if (path == role_path && instance_id.empty()) {
    response.set_content(options_.instance_role, "text/plain");
  } else if (path == role_path + options_.instance_role && instance_id.empty()) {
    ++credentials_served_;
    // IMDS hands out the same credentials until shortly before they expire (when not rotating).
    if (options_.rotate_role_credentials || role_expiration_ == WallTime{}) {
      role_key_ = "ASIAFAKE" + std::to_string(credentials_served_);
      role_expiration_ = Now() + options_.role_credentials_ttl;
    }
    const std::string key = role_key_;
    response.set_content(nlohmann::json{{"Code", "Success"},
                                        {"Type", "AWS-HMAC"},
                                        {"AccessKeyId", key},
                                        {"SecretAccessKey", "role-secret-" + key},
                                        {"Token", "role-session-" + key},
                                        {"Expiration", IsoTime(role_expiration_)}}
                             .dump(),
                         "application/json");
  } else {
    response.status = 404;
  }
}

void FakeEc2::HandleAdmin(const httplib::Request& request, httplib::Response& response) {
  const nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
  nlohmann::json reply = {{"ok", true}};
  if (request.path == "/_fake/fault" && body.is_object() && body.contains("delay_ms")) {
    InjectDelay(body.value("action", ""), std::chrono::milliseconds(body.value("delay_ms", 0)),
                body.value("times", 1));
  } else if (request.path == "/_fake/fault" && body.is_object()) {
    InjectFault(body.value("action", ""), body.value("code", "InternalError"),
                body.value("status", 500), body.value("times", 1));
  } else if (request.path == "/_fake/interrupt" && body.is_object()) {
    reply["ok"] = InterruptSpot(body.value("instance_id", ""),
                                std::chrono::milliseconds(body.value("notice_ms", 0)));
  } else if (request.path == "/_fake/lag" && body.is_object()) {
    SetInstanceVisibilityDelay(std::chrono::milliseconds(body.value("describe_instances_ms", 0)));
  } else if (request.path == "/_fake/spot" && body.is_object()) {
    SetSpotBehaviour(body.value("fulfil", true),
                     std::chrono::milliseconds(body.value("delay_ms", 0)),
                     std::chrono::milliseconds(body.value("visibility_delay_ms", 0)));
  } else if (request.path == "/_fake/state") {
    reply = State();
  } else if (request.path == "/_fake/calls") {
    reply = Calls();
  } else {
    response.status = 400;
    reply = {{"error", "unknown admin request " + request.path}};
  }
  response.set_content(reply.dump(), "application/json");
}

void FakeEc2::InjectFault(const std::string& action, const std::string& code, int status,
                          int times) {
  std::lock_guard lock(mu_);
  faults_[action].push_back({code, status, times});
}

void FakeEc2::InjectDelay(const std::string& action, std::chrono::milliseconds delay, int times) {
  std::lock_guard lock(mu_);
  faults_[action].push_back({"", 200, times, delay});
}

void FakeEc2::SetSpotBehaviour(bool fulfil, std::chrono::milliseconds delay,
                               std::chrono::milliseconds visibility_delay) {
  std::lock_guard lock(mu_);
  spot_fulfil_ = fulfil;
  spot_delay_ = delay;
  spot_visibility_delay_ = visibility_delay;
}

bool FakeEc2::InterruptSpot(const std::string& instance_id, std::chrono::milliseconds notice) {
  std::lock_guard lock(mu_);
  auto it = instances_.find(instance_id);
  if (it == instances_.end() || !it->second->spot) return false;
  Instance& instance = *it->second;
  if (notice <= std::chrono::milliseconds::zero()) {
    Reclaim(instance);
    instance.state = "terminated";
    return true;
  }
  // EC2's two-minute warning: the request is marked, IMDS announces the action and time.
  instance.reclaim_at = Now() + notice;
  if (auto request = spot_requests_.find(instance.spot_request_id);
      request != spot_requests_.end()) {
    request->second->status_code = "marked-for-termination";
    request->second->status_message = "Your Spot Instance is marked for termination.";
  }
  return true;
}

void FakeEc2::Reclaim(Instance& instance) {
  instance.state = "shutting-down";
  instance.boot.Kill();
  if (auto request = spot_requests_.find(instance.spot_request_id);
      request != spot_requests_.end()) {
    request->second->state = "closed";
    request->second->status_code = "instance-terminated-no-capacity";
    request->second->status_message = "Your Spot Instance was terminated: no capacity.";
  }
}

void FakeEc2::SetInstanceVisibilityDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  instance_visibility_delay_ = delay;
}

nlohmann::json FakeEc2::State() {
  std::lock_guard lock(mu_);
  Advance();
  nlohmann::json state = {{"instances", nlohmann::json::array()},
                          {"spot_requests", nlohmann::json::array()}};
  for (const auto& [id, instance] : instances_) {
    nlohmann::json tags = nlohmann::json::object();
    for (const auto& [key, value] : instance->tags) tags[key] = value;
    state["instances"].push_back({{"id", id},
                                  {"state", instance->state},
                                  {"spot", instance->spot},
                                  {"instance_type", instance->instance_type},
                                  {"tags", tags},
                                  {"user_data", instance->user_data},
                                  {"booted", instance->boot.running()},
                                  {"launch_params", instance->launch_params},
                                  {"metadata_options",
                                   {{"http_tokens", instance->metadata_tokens},
                                    {"hop_limit", instance->metadata_hop_limit}}}});
  }
  for (const auto& [id, request] : spot_requests_) {
    state["spot_requests"].push_back({{"id", id},
                                      {"state", request->state},
                                      {"status", request->status_code},
                                      {"instance_id", request->instance_id}});
  }
  return state;
}

nlohmann::json FakeEc2::Calls() {
  std::lock_guard lock(mu_);
  return calls_;
}

int FakeEc2::CallCount(const std::string& action) {
  std::lock_guard lock(mu_);
  int count = 0;
  for (const auto& call : calls_) count += call["action"] == action ? 1 : 0;
  return count;
}

int FakeEc2::credentials_served() const {
  std::lock_guard lock(mu_);
  return credentials_served_;
}

}  // namespace det::testing
