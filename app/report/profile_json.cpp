#include "app/report/profile_json.hpp"

#include <fmt/format.h>

#include "app/experiment/experiment.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

namespace {

using json = nlohmann::ordered_json;

json implausible_json(const PlatformProfile& profile)
{
  json out = json::array();
  for (const ImplausibleCost& c : implausible_costs(profile))
    out.push_back({{"key", c.key},
                   {"value", c.value},
                   {"plausible_min", c.plausible_min},
                   {"plausible_max", c.plausible_max},
                   {"unit", c.unit}});
  return out;
}

// How the profile keeps its transport's ties (transports/costs.hpp
// CostTie): a broken one means costs that are the same physics differ.
json ties_json(const PlatformProfile& profile)
{
  json out = json::array();
  for (const TieState& s : tie_states(profile.transport, profile.costs))
    out.push_back({{"name", s.tie->name}, {"kept", s.kept}, {"why", s.why}});
  return out;
}

json calibrated_json(const PlatformProfile& profile)
{
  json out = json::object();
  for (const auto& [direction, spans] : profile.calibrated)
    for (const auto& [quantity, span] : spans)
      out[direction][quantity] = json::array({span.first, span.second});
  return out;
}

json fit_json(const FitReport& f)
{
  json not_fitted = json::object();
  for (const auto& [cost, why] : f.not_fitted)
    not_fitted[cost] = why;
  json rows = json::array();
  for (const FitRow& r : f.rows)
    rows.push_back({{"keys", r.keys},
                    {"metric", r.metric},
                    {"role", r.role},
                    {"measured", r.measured},
                    {"before", r.before},
                    {"after", r.after}});
  return {{"experiment", f.experiment}, {"measurements", f.measurements}, {"optimiser", f.optimiser},
          {"fitted", f.fitted},         {"not_fitted", not_fitted},       {"hold_out", f.hold_out},
          {"folds", f.folds},           {"evaluations", f.evaluations},   {"mae_before", f.mae_before},
          {"mae_fit", f.mae_fit},       {"mae_held_out", f.mae_held_out}, {"mae_cv", f.mae_cv},
          {"rows", std::move(rows)}};
}

FitReport fit_from_json(const json& j)
{
  FitReport f;
  f.experiment = j.at("experiment").get<std::string>();
  f.measurements = j.at("measurements").get<std::string>();
  f.optimiser = j.at("optimiser").get<std::string>();
  f.fitted = j.at("fitted").get<std::vector<std::string>>();
  for (const auto& [cost, why] : j.at("not_fitted").items())
    f.not_fitted.emplace_back(cost, why.get<std::string>());
  f.hold_out = j.at("hold_out").get<std::vector<std::string>>();
  f.folds = j.at("folds").get<unsigned>();
  f.evaluations = j.at("evaluations").get<unsigned>();
  f.mae_before = j.at("mae_before").get<double>();
  f.mae_fit = j.at("mae_fit").get<double>();
  f.mae_held_out = j.at("mae_held_out").get<double>();
  f.mae_cv = j.at("mae_cv").get<double>();
  for (const json& r : j.at("rows"))
    f.rows.push_back({r.at("keys").get<std::string>(), r.at("metric").get<std::string>(),
                      r.at("role").get<std::string>(), r.at("measured").get<double>(), r.at("before").get<double>(),
                      r.at("after").get<double>()});
  return f;
}

} // namespace

json profile_json(const PlatformProfile& profile)
{
  json j = json::object();
  j["origin"] = profile.origin;
  j["sha256"] = profile.sha256;
  j["transport"] = profile.transport;
  j["description"] = profile.doc;
  json hardware = json::object();
  for (const auto& [key, value] : profile.hardware)
    hardware[key] = value;
  j["hardware"] = std::move(hardware);
  j["base"] = profile.base;
  json costs = json::object();
  for (const auto& [key, value] : profile.costs)
    costs[key] = value;
  j["costs"] = std::move(costs);
  j["implausible"] = implausible_json(profile);
  j["ties"] = ties_json(profile);
  j["caveats"] = profile_caveats(profile);
  j["calibrated"] = calibrated_json(profile);
  json provenance = json::object();
  for (const auto& [key, p] : profile.provenance)
    provenance[key] = {{"source", p.source}, {"note", p.note}, {"reason", p.reason}};
  j["provenance"] = std::move(provenance);
  if (profile.fit)
    j["fit"] = fit_json(*profile.fit);
  return j;
}

PlatformProfile profile_from_json(const std::string& name, const json& j, const std::string& where)
{
  PlatformProfile p;
  p.name = name;
  try {
    p.origin = j.at("origin").get<std::string>();
    p.sha256 = j.at("sha256").get<std::string>();
    p.transport = j.at("transport").get<std::string>();
    p.doc = j.at("description").get<std::string>();
    for (const auto& [key, value] : j.at("hardware").items())
      p.hardware.emplace_back(key, value.get<std::string>());
    p.base = j.at("base").get<std::string>();
    for (const auto& [key, value] : j.at("costs").items())
      p.costs[key] = value.get<double>();
    for (const auto& [direction, spans] : j.at("calibrated").items())
      for (const auto& [quantity, span] : spans.items())
        p.calibrated[direction][quantity] = {span.at(0).get<double>(), span.at(1).get<double>()};
    for (const auto& [key, v] : j.at("provenance").items())
      p.provenance[key] = {v.at("source").get<std::string>(), v.at("note").get<std::string>(),
                           v.at("reason").get<std::string>()};
    if (j.contains("fit"))
      p.fit = fit_from_json(j.at("fit"));
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: error: not a platform profile as `run` records it ({})", where, e.what()));
  }
  return p;
}

} // namespace vsim::app
