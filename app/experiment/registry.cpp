#include "app/experiment/registry.hpp"

#include "app/experiment/platforms.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

const ParamRegistry& registry()
{
  static const ParamRegistry reg = [] {
    ParamRegistry r;
    declare_experiment_params(r);
    for (const Transport& t : transports())
      t.declare_params(r);
    declare_cost_params(r);
    declare_validation_params(r);
    return r;
  }();
  return reg;
}

} // namespace vsim::app
