#include "transports/profiles.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "transports/transport.hpp"

namespace vsim {

std::vector<ImplausibleCost> implausible_costs(const PlatformProfile& profile)
{
  std::vector<ImplausibleCost> out;
  for (const CostDecl& c : all_cost_decls()) {
    auto it = profile.costs.find(c.name);
    if (it == profile.costs.end())
      continue;
    // A mechanism's "off" (the value of a profile without it) is no cost.
    if (it->second == c.absent)
      continue;
    if (it->second < c.plausible_min || it->second > c.plausible_max)
      out.push_back({c.name, it->second, c.plausible_min, c.plausible_max, c.unit});
  }
  return out;
}

std::vector<std::string> profile_caveats(const PlatformProfile& profile)
{
  std::vector<std::string> out;
  for (const TieState& t : tie_states(profile.transport, profile.costs))
    if (!t.kept)
      out.push_back(fmt::format("breaks the tie {} ({})", t.tie->name, t.why));
  for (const ImplausibleCost& c : implausible_costs(profile))
    out.push_back(fmt::format("has costs.{} = {:g} {} outside its plausible range {:g} .. {:g}", c.key, c.value, c.unit,
                              c.plausible_min, c.plausible_max));
  return out;
}

namespace {

// The value of `direction=` in a fit row's keys ("" when it names none).
std::string direction_of(const std::string& keys)
{
  const std::string tag = "direction=";
  const std::size_t at = keys.find(tag);
  if (at == std::string::npos)
    return "";
  const std::size_t from = at + tag.size();
  const std::size_t to = keys.find(',', from);
  return keys.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

} // namespace

std::optional<EffectDiscrepancy> effect_discrepancy(const PlatformProfile& profile)
{
  if (!profile.fit)
    return std::nullopt;
  const FitReport& fit = *profile.fit;
  // (metric, direction) -> each fit row's log error, in report order
  std::map<std::pair<std::string, std::string>, std::vector<double>> groups;
  for (const FitRow& r : fit.rows)
    if (r.role == "fit" && r.measured > 0 && r.after > 0 && std::isfinite(r.after))
      groups[{r.metric, direction_of(r.keys)}].push_back(std::log(r.after / r.measured));
  double sum = 0;
  std::size_t pairs = 0;
  for (const auto& [group, errors] : groups)
    for (std::size_t a = 0; a < errors.size(); ++a)
      for (std::size_t b = a + 1; b < errors.size(); ++b) {
        const double d = errors[b] - errors[a];
        sum += d * d;
        ++pairs;
      }
  if (pairs < kMinDiscrepancyPairs)
    return std::nullopt;
  EffectDiscrepancy e;
  e.pairs = pairs;
  e.pair_rms = std::sqrt(sum / static_cast<double>(pairs));
  if (fit.mae_cv > 0 && fit.mae_fit > 0)
    e.inflation = std::max(1.0, fit.mae_cv / fit.mae_fit);
  e.sigma = e.pair_rms * e.inflation;
  return e;
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
                    .absent(c.absent)
                    .basis(c.basis)
                    .sources(c.sources));
  }
}

} // namespace vsim
