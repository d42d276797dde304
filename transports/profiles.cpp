#include "transports/profiles.hpp"

#include <algorithm>

#include "transports/transport.hpp"

namespace vsim {

std::vector<ImplausibleCost> implausible_costs(const PlatformProfile& profile)
{
  std::vector<ImplausibleCost> out;
  for (const CostDecl& c : all_cost_decls()) {
    auto it = profile.costs.find(c.name);
    if (it == profile.costs.end())
      continue;
    if (it->second < c.plausible_min || it->second > c.plausible_max)
      out.push_back({c.name, it->second, c.plausible_min, c.plausible_max, c.unit});
  }
  return out;
}

void declare_cost_params(ParamRegistry& reg)
{
  for (const CostDecl& c : all_cost_decls())
    reg.declare(Param(std::string("costs.") + c.name)
                    .number()
                    .unit(c.unit)
                    .def("(platform)")
                    .derives_from({"platform"})
                    .range(c.min, c.max)
                    .doc(c.doc)
                    .scope(c.scope)
                    .plausible(c.plausible_min, c.plausible_max)
                    .basis(c.basis)
                    .sources(c.sources));
}

} // namespace vsim
