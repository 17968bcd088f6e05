#pragma once

// The provider contract (provider/) as the autoscaler speaks it: its names, unqualified inside
// det::autoscaler. The contract sits below the autoscaler and the clouds; the autoscaler decides,
// the providers carry decisions out.

#include "provider/agent_bootstrap.h"
#include "provider/agent_start.h"
#include "provider/provider.h"
#include "provider/provider_config.h"

namespace det::autoscaler {

using provider::AgentStartConfig;
using provider::Instance;
using provider::InstanceState;
using provider::InstanceStateName;
using provider::LaunchOutcome;
using provider::LaunchRequest;
using provider::LaunchResult;
using provider::Offering;
using provider::Provider;
using provider::ProviderConfig;
using provider::ProviderError;
using provider::ProviderErrorKind;
using provider::ProviderErrorKindName;
using provider::ProviderErrorKindOf;
using provider::ReadProviderConfig;
using provider::SectionType;

}  // namespace det::autoscaler
