#include "transports/profiles.hpp"

#include <algorithm>
#include <string_view>

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
  for (const CostDecl& c : all_cost_decls()) {
    Param p(std::string("costs.") + c.name);
    // A setting that is on or off (unit "flag"): 0 or 1, nothing between.
    if (std::string_view(c.unit) == "flag")
      p.check([](const std::string& text) -> std::string {
        const double v = std::stod(text);
        return v == 0 || v == 1 ? "" : text + " is not 0 or 1 (allowed: 0 off, 1 on)";
      });
    reg.declare(p.number()
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
}

} // namespace vsim
