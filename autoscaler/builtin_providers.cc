// The providers det-autoscaler is built with: local, aws, gcp. The composition root of the
// autoscaler's providers, a library of its own above the core and the clouds (which know only the
// provider contract, provider/).
#include "autoscaler/autoscaler.h"
#include "autoscaler/local_provider.h"
#include "cloud_aws/aws_config.h"
#include "cloud_aws/aws_provider.h"
#include "cloud_gcp/gcp_config.h"
#include "cloud_gcp/gcp_provider.h"

namespace det::autoscaler {

ProviderCatalog BuiltInProviders(const Clock& clock) {
  ProviderCatalog catalog;
  catalog.sections = {provider::LocalSection(), aws::AwsSection(), gcp::GcpSection()};
  catalog.make = [&clock](const ProviderConfig& config,
                          const bus::PoolProviderEvent& pool) -> Result<std::unique_ptr<Provider>> {
    if (config.type == "aws") return aws::MakeAwsProvider(config, pool, clock);
    if (config.type == "gcp") return gcp::MakeGcpProvider(config, pool, clock);
    if (config.type != "local") {
      return FailedPrecondition("provider type " + config.type +
                                " is not built into this det-autoscaler yet");
    }
    LocalProviderOptions options{pool.cluster_id, pool.agent_host, pool.agent_port, "", {}, ""};
    DET_RETURN_IF_ERROR(ReadLocalProviderOptions(config.raw, &options));
    return std::unique_ptr<Provider>(std::make_unique<LocalProvider>(std::move(options), clock));
  };
  return catalog;
}

}  // namespace det::autoscaler
