#include "app/registry.hpp"

#include "app/compare.hpp"
#include "transports/hv_sock/params.hpp"
#include "transports/profiles.hpp"
#include "transports/virtio_vsock/params.hpp"

namespace vsim::app {

const ParamRegistry& registry()
{
  static const ParamRegistry reg = [] {
    ParamRegistry r;
    declare_experiment_params(r);
    hv_sock::declare_params(r);
    virtio_vsock::declare_params(r);
    declare_cost_params(r);
    declare_validation_params(r);
    return r;
  }();
  return reg;
}

}  // namespace vsim::app
