#pragma once

// The autoscaler's instances and decisions between the bus's form (what it publishes, what the
// front door answers) and the database's (what the instance recorder stores).

#include "bus/catalog/autoscaler.h"
#include "storage/cloud_repo.h"

namespace det::master {

storage::InstanceRecord ToRecord(const bus::InstanceInfo& instance);
bus::InstanceInfo FromRecord(const storage::InstanceRecord& record);
storage::ScalingDecisionRecord ToRecord(const bus::ScalingDecisionEvent& decision);
bus::ScalingDecisionEvent FromRecord(const storage::ScalingDecisionRecord& record);

}  // namespace det::master
