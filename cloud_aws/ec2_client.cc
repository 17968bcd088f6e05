#include "cloud_aws/ec2_client.h"

#include <pugixml.hpp>
#include <set>

#include "common/base64.h"

namespace det::aws {
namespace {

constexpr const char* kApiVersion = "2016-11-15";

// The SDKs' lists (botocore's retryhandler, aws-sdk-go's request/retryer).
const std::set<std::string> kThrottlingCodes = {"Throttling",
                                                "ThrottlingException",
                                                "ThrottledException",
                                                "RequestThrottledException",
                                                "TooManyRequestsException",
                                                "RequestLimitExceeded",
                                                "RequestThrottled",
                                                "BandwidthLimitExceeded",
                                                "SlowDown",
                                                "PriorRequestNotComplete",
                                                "EC2ThrottledException",
                                                "ProvisionedThroughputExceededException"};
const std::set<std::string> kCapacityCodes = {"InsufficientInstanceCapacity",
                                              "InsufficientHostCapacity",
                                              "InsufficientReservedInstanceCapacity",
                                              "InsufficientCapacity",
                                              "InsufficientFreeAddressesInSubnet",
                                              "SpotMaxPriceTooLow",
                                              "Unsupported"};
const std::set<std::string> kQuotaCodes = {"InstanceLimitExceeded",        "VcpuLimitExceeded",
                                           "MaxSpotInstanceCountExceeded", "AddressLimitExceeded",
                                           "VolumeLimitExceeded",          "ResourceLimitExceeded"};
const std::set<std::string> kAuthCodes = {"UnauthorizedOperation", "AuthFailure",
                                          "InvalidClientTokenId",  "SignatureDoesNotMatch",
                                          "ExpiredToken",          "RequestExpired",
                                          "OptInRequired",         "Blocked",
                                          "PendingVerification",   "AccessDenied",
                                          "AccessDeniedException", "MissingAuthenticationToken",
                                          "IncompleteSignature"};
const std::set<std::string> kTransientCodes = {
    "InternalError",  "InternalFailure",         "ServiceUnavailable",   "Unavailable",
    "RequestTimeout", "RequestTimeoutException", "IDPCommunicationError"};

std::string Text(const pugi::xml_node& node, const char* child) {
  return node.child(child).text().as_string();
}

WallTime TimeOf(const std::string& text) {
  Result<WallTime> time = ParseIso8601(text);
  return time.ok() ? *time : WallTime{};
}

std::vector<Ec2Tag> ReadTags(const pugi::xml_node& node) {
  std::vector<Ec2Tag> tags;
  for (const pugi::xml_node& item : node.child("tagSet").children("item")) {
    tags.push_back({Text(item, "key"), Text(item, "value")});
  }
  return tags;
}

// The metadata options that keep the instance role's credentials from containers
// (Ec2Instance::MetadataClosedToContainers), under `prefix`.
void AddClosedMetadataOptions(const std::string& prefix,
                              std::map<std::string, std::string>* params) {
  (*params)[prefix + "HttpTokens"] = "required";
  (*params)[prefix + "HttpPutResponseHopLimit"] = "1";
  (*params)[prefix + "HttpEndpoint"] = "enabled";
}

Ec2Instance ReadInstance(const pugi::xml_node& item) {
  Ec2Instance instance;
  instance.id = Text(item, "instanceId");
  instance.state = item.child("instanceState").child("name").text().as_string();
  instance.instance_type = Text(item, "instanceType");
  instance.zone = item.child("placement").child("availabilityZone").text().as_string();
  instance.lifecycle = Text(item, "instanceLifecycle");
  instance.spot_request_id = Text(item, "spotInstanceRequestId");
  instance.private_ip = Text(item, "privateIpAddress");
  instance.launch_time = TimeOf(Text(item, "launchTime"));
  instance.tags = ReadTags(item);
  const pugi::xml_node metadata = item.child("metadataOptions");
  instance.metadata_tokens = Text(metadata, "httpTokens");
  instance.metadata_hop_limit = metadata.child("httpPutResponseHopLimit").text().as_int();
  return instance;
}

SpotRequest ReadSpotRequest(const pugi::xml_node& item) {
  SpotRequest request;
  request.id = Text(item, "spotInstanceRequestId");
  request.state = Text(item, "state");
  request.status_code = item.child("status").child("code").text().as_string();
  request.status_message = item.child("status").child("message").text().as_string();
  request.instance_id = Text(item, "instanceId");
  request.instance_type =
      item.child("launchSpecification").child("instanceType").text().as_string();
  request.zone = Text(item, "launchedAvailabilityZone");
  request.create_time = TimeOf(Text(item, "createTime"));
  request.tags = ReadTags(item);
  return request;
}

// The document's root element, or an error naming the action if the body is not XML.
Ec2Result<pugi::xml_node> Root(pugi::xml_document& doc, const std::string& body,
                               const std::string& action) {
  const pugi::xml_parse_result parsed = doc.load_buffer(body.data(), body.size());
  if (!parsed || !doc.document_element()) {
    return Ec2Error{action,
                    "MalformedResponse",
                    std::string("the response is not XML (") + parsed.description() + ")",
                    200,
                    "",
                    Ec2ErrorKind::kTransient};
  }
  return doc.document_element();
}

void AddFilters(const std::vector<Ec2Filter>& filters, std::map<std::string, std::string>* params) {
  for (size_t i = 0; i < filters.size(); ++i) {
    const std::string prefix = "Filter." + std::to_string(i + 1) + ".";
    (*params)[prefix + "Name"] = filters[i].name;
    for (size_t j = 0; j < filters[i].values.size(); ++j) {
      (*params)[prefix + "Value." + std::to_string(j + 1)] = filters[i].values[j];
    }
  }
}

void AddList(const std::string& name, const std::vector<std::string>& values,
             std::map<std::string, std::string>* params) {
  for (size_t i = 0; i < values.size(); ++i) {
    (*params)[name + "." + std::to_string(i + 1)] = values[i];
  }
}

void AddTagSpecification(const std::string& resource_type, const std::vector<Ec2Tag>& tags,
                         std::map<std::string, std::string>* params) {
  if (tags.empty()) return;
  (*params)["TagSpecification.1.ResourceType"] = resource_type;
  for (size_t i = 0; i < tags.size(); ++i) {
    const std::string prefix = "TagSpecification.1.Tag." + std::to_string(i + 1) + ".";
    (*params)[prefix + "Key"] = tags[i].key;
    (*params)[prefix + "Value"] = tags[i].value;
  }
}

}  // namespace

Ec2ErrorKind ClassifyEc2Error(const std::string& code, long http_status) {
  if (kThrottlingCodes.contains(code) || http_status == 429) return Ec2ErrorKind::kThrottled;
  if (kCapacityCodes.contains(code)) return Ec2ErrorKind::kCapacity;
  if (kQuotaCodes.contains(code)) return Ec2ErrorKind::kQuota;
  if (kAuthCodes.contains(code)) return Ec2ErrorKind::kAuth;
  if (code.ends_with(".NotFound")) return Ec2ErrorKind::kNotFound;
  if (kTransientCodes.contains(code) || http_status >= 500 || http_status == 0) {
    return Ec2ErrorKind::kTransient;
  }
  return Ec2ErrorKind::kInvalid;
}

std::string Ec2Error::ToString() const {
  std::string text = "ec2:" + action + " failed: " + (code.empty() ? "" : code + ": ") + message;
  if (http_status != 0 || !request_id.empty()) {
    text += " (";
    if (http_status != 0) text += "HTTP " + std::to_string(http_status);
    if (!request_id.empty())
      text += (http_status != 0 ? ", request id " : "request id ") + request_id;
    text += ")";
  }
  if (code == "UnauthorizedOperation") {
    text += "; the IAM policy of the autoscaler's role must allow ec2:" + action;
  }
  return text;
}

std::string Ec2Instance::Tag(const std::string& key) const {
  for (const Ec2Tag& tag : tags) {
    if (tag.key == key) return tag.value;
  }
  return "";
}

bool Ec2Instance::MetadataClosedToContainers() const {
  return metadata_tokens == "required" && metadata_hop_limit == 1;
}

std::string SpotRequest::Tag(const std::string& key) const {
  for (const Ec2Tag& tag : tags) {
    if (tag.key == key) return tag.value;
  }
  return "";
}

std::map<std::string, std::string> LaunchSpecParams(const LaunchSpec& spec,
                                                    const std::string& prefix) {
  std::map<std::string, std::string> params;
  params[prefix + "ImageId"] = spec.image_id;
  params[prefix + "InstanceType"] = spec.instance_type;
  if (!spec.key_name.empty()) params[prefix + "KeyName"] = spec.key_name;
  if (!spec.iam_instance_profile_arn.empty()) {
    params[prefix + "IamInstanceProfile.Arn"] = spec.iam_instance_profile_arn;
  }
  const std::string nic = prefix + "NetworkInterface.1.";
  params[nic + "DeviceIndex"] = "0";
  params[nic + "AssociatePublicIpAddress"] = spec.public_ip ? "true" : "false";
  params[nic + "DeleteOnTermination"] = "true";
  if (!spec.subnet_id.empty()) params[nic + "SubnetId"] = spec.subnet_id;
  if (!spec.security_group_id.empty()) params[nic + "SecurityGroupId.1"] = spec.security_group_id;
  const std::string disk = prefix + "BlockDeviceMapping.1.";
  params[disk + "DeviceName"] = spec.root_device_name;
  params[disk + "Ebs.VolumeSize"] = std::to_string(spec.root_volume_size_gb);
  params[disk + "Ebs.VolumeType"] = "gp3";
  params[disk + "Ebs.DeleteOnTermination"] = "true";
  if (!spec.zone.empty()) params[prefix + "Placement.AvailabilityZone"] = spec.zone;
  if (!spec.user_data.empty()) params[prefix + "UserData"] = Base64Encode(spec.user_data);
  return params;
}

Ec2Client::Ec2Client(Ec2ClientOptions options, std::shared_ptr<CredentialsChain> credentials,
                     const Clock& clock)
    : options_(std::move(options)), credentials_(std::move(credentials)), clock_(clock) {
  endpoint_ = options_.endpoint_url.empty() ? "https://ec2." + options_.region + ".amazonaws.com/"
                                            : options_.endpoint_url;
  if (!endpoint_.ends_with('/')) endpoint_ += '/';
}

Ec2Result<std::string> Ec2Client::Attempt(const std::string& action, const std::string& body) {
  Result<Credentials> credentials = credentials_->Get();
  if (!credentials.ok()) {
    return Ec2Error{action, "NoCredentials",    credentials.status().message(), 0,
                    "",     Ec2ErrorKind::kAuth};
  }
  Result<UrlParts> url = ParseUrl(endpoint_);
  if (!url.ok()) {
    return Ec2Error{action, "InvalidEndpoint",     url.status().message(), 0,
                    "",     Ec2ErrorKind::kInvalid};
  }
  SignableRequest signable{"POST", url->path, "", {}, body};
  signable.headers = {{"Host", url->HostHeader()},
                      {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}};
  SignRequest(&signable, *credentials, {options_.region, "ec2"}, clock_.WallNow());
  HttpRequest request{"POST", endpoint_, signable.headers, body, options_.timeout};
  Result<HttpResponse> response = http_.Send(request);
  if (!response.ok()) {
    return Ec2Error{action, "", response.status().message(), 0, "", Ec2ErrorKind::kTransient};
  }
  if (response->status == 200) return std::move(response->body);
  return ReadEc2Error(action, response->status, response->body);
}

Ec2Error ReadEc2Error(const std::string& action, long http_status, const std::string& body) {
  Ec2Error error{action, "", "", http_status, "", Ec2ErrorKind::kTransient};
  pugi::xml_document doc;
  if (doc.load_buffer(body.data(), body.size())) {
    const pugi::xml_node root = doc.document_element();
    const pugi::xml_node first = root.child("Errors").child("Error");
    error.code = Text(first, "Code");
    error.message = Text(first, "Message");
    error.request_id = Text(root, "RequestID");
  }
  if (error.code.empty()) {
    error.message = "HTTP " + std::to_string(http_status) + " without an EC2 error document";
  }
  error.kind = ClassifyEc2Error(error.code, http_status);
  return error;
}

Ec2Result<std::string> Ec2Client::Call(const std::string& action,
                                       const std::map<std::string, std::string>& params) {
  std::map<std::string, std::string> all = params;
  all["Action"] = action;
  all["Version"] = kApiVersion;
  const std::string body = FormEncode({all.begin(), all.end()});
  for (int attempt = 0;; ++attempt) {
    Ec2Result<std::string> result = Attempt(action, body);
    if (result.ok()) return result;
    const Ec2ErrorKind kind = result.error().kind;
    const bool retryable = kind == Ec2ErrorKind::kThrottled || kind == Ec2ErrorKind::kTransient;
    if (!retryable || attempt + 1 >= options_.retry.max_attempts) return result;
    clock_.SleepFor(BackoffDelay(options_.retry, attempt));
  }
}

namespace {

// Where the items of `action`'s answer are: a path of child elements of the root, each step
// through every `item` of the step before.
std::vector<const char*> SetPathOf(const std::string& action) {
  if (action == "DescribeInstances") return {"reservationSet", "instancesSet"};
  if (action == "RunInstances" || action == "TerminateInstances") return {"instancesSet"};
  return {"spotInstanceRequestSet"};
}

template <class T>
Ec2Result<Ec2Page<T>> ReadItems(const std::string& action, const std::string& body,
                                T (*read)(const pugi::xml_node&)) {
  pugi::xml_document doc;
  Ec2Result<pugi::xml_node> root = Root(doc, body, action);
  if (!root.ok()) return root.error();
  std::vector<pugi::xml_node> sets = {root.value()};
  for (const char* name : SetPathOf(action)) {
    std::vector<pugi::xml_node> children;
    for (const pugi::xml_node& set : sets) {
      for (const pugi::xml_node& item : set.child(name).children("item")) children.push_back(item);
    }
    sets = std::move(children);
  }
  Ec2Page<T> page;
  for (const pugi::xml_node& item : sets) page.items.push_back(read(item));
  page.next_token = Text(root.value(), "nextToken");
  return page;
}

std::string ReadInstanceId(const pugi::xml_node& item) { return Text(item, "instanceId"); }
std::string ReadSpotRequestId(const pugi::xml_node& item) {
  return Text(item, "spotInstanceRequestId");
}

// Calls `action` and reads each answer with `read_answer`; with `paged`, follows nextToken
// through every page.
template <class T>
Ec2Result<std::vector<T>> CallForItems(Ec2Client& client, const std::string& action,
                                       std::map<std::string, std::string> params, bool paged,
                                       Ec2Result<Ec2Page<T>> (*read_answer)(const std::string&,
                                                                            const std::string&)) {
  std::vector<T> items;
  std::string next_token;
  do {
    if (!next_token.empty()) params["NextToken"] = next_token;
    Ec2Result<std::string> body = client.Call(action, params);
    if (!body.ok()) return body.error();
    Ec2Result<Ec2Page<T>> page = read_answer(action, body.value());
    if (!page.ok()) return page.error();
    for (T& item : page.value().items) items.push_back(std::move(item));
    std::string token = paged ? page.value().next_token : "";
    if (!token.empty() && token == next_token) {
      return Ec2Error{action, "MalformedResponse",     "the same nextToken twice: " + token, 200,
                      "",     Ec2ErrorKind::kTransient};
    }
    next_token = std::move(token);
  } while (!next_token.empty());
  return items;
}

}  // namespace

Ec2Result<Ec2Page<Ec2Instance>> ReadInstancesAnswer(const std::string& action,
                                                    const std::string& body) {
  return ReadItems(action, body, &ReadInstance);
}

Ec2Result<Ec2Page<SpotRequest>> ReadSpotRequestsAnswer(const std::string& action,
                                                       const std::string& body) {
  return ReadItems(action, body, &ReadSpotRequest);
}

Ec2Result<Ec2Page<std::string>> ReadIdsAnswer(const std::string& action, const std::string& body) {
  return ReadItems(action, body,
                   action == "TerminateInstances" ? &ReadInstanceId : &ReadSpotRequestId);
}

Ec2Result<std::vector<Ec2Instance>> Ec2Client::RunInstances(const LaunchSpec& spec, int count,
                                                            const std::string& client_token) {
  std::map<std::string, std::string> params = LaunchSpecParams(spec, "");
  params["MinCount"] = "1";
  params["MaxCount"] = std::to_string(count);
  params["ClientToken"] = client_token;
  params["InstanceInitiatedShutdownBehavior"] = "terminate";
  AddClosedMetadataOptions("MetadataOptions.", &params);
  AddTagSpecification("instance", spec.tags, &params);
  return CallForItems(*this, "RunInstances", std::move(params), false, &ReadInstancesAnswer);
}

Ec2Result<std::vector<Ec2Instance>> Ec2Client::DescribeInstances(
    const std::vector<Ec2Filter>& filters) {
  std::map<std::string, std::string> params;
  AddFilters(filters, &params);
  params["MaxResults"] = "1000";
  return CallForItems(*this, "DescribeInstances", std::move(params), true, &ReadInstancesAnswer);
}

Ec2Result<std::vector<std::string>> Ec2Client::TerminateInstances(
    const std::vector<std::string>& ids) {
  std::map<std::string, std::string> params;
  AddList("InstanceId", ids, &params);
  return CallForItems(*this, "TerminateInstances", std::move(params), false, &ReadIdsAnswer);
}

Ec2Result<bool> Ec2Client::CreateTags(const std::vector<std::string>& resource_ids,
                                      const std::vector<Ec2Tag>& tags) {
  std::map<std::string, std::string> params;
  AddList("ResourceId", resource_ids, &params);
  for (size_t i = 0; i < tags.size(); ++i) {
    params["Tag." + std::to_string(i + 1) + ".Key"] = tags[i].key;
    params["Tag." + std::to_string(i + 1) + ".Value"] = tags[i].value;
  }
  Ec2Result<std::string> body = Call("CreateTags", params);
  if (!body.ok()) return body.error();
  return true;
}

Ec2Result<bool> Ec2Client::ModifyInstanceMetadataOptions(const std::string& instance_id) {
  std::map<std::string, std::string> params = {{"InstanceId", instance_id}};
  AddClosedMetadataOptions("", &params);
  Ec2Result<std::string> body = Call("ModifyInstanceMetadataOptions", params);
  if (!body.ok()) return body.error();
  return true;
}

Ec2Result<std::vector<SpotRequest>> Ec2Client::RequestSpotInstances(
    const LaunchSpec& spec, int count, const std::string& max_price,
    const std::string& client_token) {
  std::map<std::string, std::string> params = LaunchSpecParams(spec, "LaunchSpecification.");
  params["InstanceCount"] = std::to_string(count);
  params["Type"] = "one-time";
  params["ClientToken"] = client_token;
  if (!max_price.empty()) params["SpotPrice"] = max_price;
  AddTagSpecification("spot-instances-request", spec.tags, &params);
  return CallForItems(*this, "RequestSpotInstances", std::move(params), false,
                      &ReadSpotRequestsAnswer);
}

Ec2Result<std::vector<SpotRequest>> Ec2Client::DescribeSpotInstanceRequests(
    const std::vector<Ec2Filter>& filters, const std::vector<std::string>& ids) {
  std::map<std::string, std::string> params;
  AddFilters(filters, &params);
  AddList("SpotInstanceRequestId", ids, &params);
  return CallForItems(*this, "DescribeSpotInstanceRequests", std::move(params), true,
                      &ReadSpotRequestsAnswer);
}

Ec2Result<std::vector<std::string>> Ec2Client::CancelSpotInstanceRequests(
    const std::vector<std::string>& ids) {
  std::map<std::string, std::string> params;
  AddList("SpotInstanceRequestId", ids, &params);
  return CallForItems(*this, "CancelSpotInstanceRequests", std::move(params), false,
                      &ReadIdsAnswer);
}

}  // namespace det::aws
