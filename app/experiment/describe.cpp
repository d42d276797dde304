#include "app/experiment/describe.hpp"

#include "app/experiment/text.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/experiment/experiment.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/search_spec.hpp"
#include "app/experiment/units.hpp"
#include "transports/virtio_vsock/params.hpp"

#include "transports/simulate.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

namespace {

bool is_cost(const ParamSpec& spec)
{
  return spec.path.rfind("costs.", 0) == 0;
}

// A profile's value of the cost `spec` (a `costs.*` key), or null if it has none.
const double* profile_value(const PlatformProfile& profile, const ParamSpec& spec)
{
  auto it = profile.costs.find(spec.path.substr(6));
  return it == profile.costs.end() ? nullptr : &it->second;
}

// First path segment, or "" for top-level keys (name, seed, ...).
std::string section_of(const std::string& path)
{
  const auto dot = path.find('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

bool matches(const std::string& path, const std::string& topic)
{
  return topic.empty() || path == topic || path.rfind(topic + ".", 0) == 0;
}

std::string with_unit(double x, const std::string& unit)
{
  return unit.empty() ? format_number(x) : format_number(x) + " " + unit;
}

std::string type_text(const ParamSpec& spec)
{
  std::string t = to_string(spec.kind);
  if (!spec.unit.empty())
    t += " (" + spec.unit + ")";
  return t;
}

std::string default_text(const ParamSpec& spec)
{
  if (is_cost(spec))
    return "from the platform profile";
  if (spec.default_text == kFromPreset)
    return "from " + spec.scope.substr(0, spec.scope.find(',')) + ".preset";
  if (spec.default_text.empty())
    return spec.kind == ParamKind::Text ? "(empty)" : "(required)";
  return spec.default_text;
}

std::vector<std::string> topics(const ParamRegistry& reg)
{
  std::set<std::string> s = {"platforms", "metrics", "search"};
  for (const auto& spec : reg.all())
    s.insert(section_of(spec.path).empty() ? spec.path : section_of(spec.path));
  return {s.begin(), s.end()};
}

bool has_plausible_range(const ParamSpec& spec)
{
  return !std::isnan(spec.plausible_min) && !std::isnan(spec.plausible_max);
}

// A mechanism's "off" (spec.absent: the value of a profile without it) is
// no cost, as implausible_costs() has it.
bool plausible(const ParamSpec& spec, double value)
{
  return !has_plausible_range(spec) || value == spec.absent ||
         (value >= spec.plausible_min && value <= spec.plausible_max);
}

std::string plausible_text(const ParamSpec& spec)
{
  return fmt::format("{} .. {} {}", format_number(spec.plausible_min), format_number(spec.plausible_max), spec.unit);
}

void describe_param(std::string& out, const ParamSpec& spec)
{
  out += spec.path + "\n";
  out += fmt::format("  type:    {}\n", type_text(spec));
  out += fmt::format("  default: {}\n", default_text(spec));
  if (const std::string allowed = allowed_values(spec); !allowed.empty())
    out += fmt::format("  allowed: {}\n", allowed);
  if (!spec.scope.empty())
    out += fmt::format("  applies to transport {} only\n", scope_text(spec.scope));
  if (is_cost(spec))
    for (const auto& profile : platform_profiles()) {
      if (!scope_applies(spec.scope, profile.transport))
        continue;
      out += "  " + profile_value_text(profile, spec) + "\n";
    }
  out += "  " + spec.doc + "\n";
  if (has_plausible_range(spec)) {
    out += fmt::format("  plausible: {} (docs/cost-sources.md)\n", plausible_text(spec));
    out += fmt::format("    basis:   {}\n    sources: {}\n", spec.plausible_basis, spec.plausible_sources);
  }
  out += "\n";
}

void describe_platforms(std::string& out, const ParamRegistry& reg)
{
  out += "The shipped platform profiles (experiments/platforms/*.yaml; `vsocksim describe platforms FILE` checks and "
         "shows a profile file of your own, docs/profiles.md):\n\n";
  for (const auto& profile : platform_profiles())
    out += describe_profile(reg, profile);
}

const char* scaling_text(Scaling s)
{
  switch (s) {
  case Scaling::Total:
    return "total";
  case Scaling::PerByte:
    return "per byte";
  case Scaling::PerTime:
    return "per time";
  case Scaling::BytesOver:
    return "bytes over a total";
  case Scaling::AsIs:
    return "as is";
  }
  return "?";
}

// Every metric a run reports: name, unit, how sim.run_length auto
// extrapolates it, meaning (the declarations of transports/simulate.cpp).
void describe_metrics(std::string& out)
{
  out += "Metrics (MB = 10^6 bytes; CPU percentages sum over CPUs; `extrapolated as`: how sim.run_length auto "
         "continues the figure from the steady state, docs/run-length.md):\n\n";
  for (const MetricDoc& d : metric_docs())
    out += fmt::format("{}\n  unit: {}; extrapolated as: {}\n  {}\n", d.name, d.unit.empty() ? "(none)" : d.unit,
                       scaling_text(d.scaling), d.doc);
}

// The keys of a search section (search_spec.hpp), as describe_param shows a
// parameter.
void describe_search(std::string& out, const std::string& topic)
{
  for (const SearchKeyDoc& k : search_keys())
    if (matches(k.path, topic) || topic == "search")
      out += fmt::format("{}\n  type:    {}\n  default: {}\n  allowed: {}\n  {}\n\n", k.path, k.type, k.default_text,
                         k.allowed, k.doc);
}

// Markdown table cells must not contain a bare '|' or a newline.
std::string cell(const std::string& s)
{
  std::string out;
  for (char c : s)
    out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

// The fit that made a profile, in a few lines.
std::string fit_summary(const FitReport& f)
{
  std::size_t fit_rows = 0, held = 0;
  for (const FitRow& r : f.rows)
    ++(r.role == "fit" ? fit_rows : held);
  std::string out = fmt::format("  fitted by {} on {} row(s) of {} ({} simulations of the rows): {} cost(s) moved\n",
                                f.optimiser, fit_rows, f.experiment, f.evaluations, f.fitted.size());
  out += fmt::format("    mean absolute error of the fit rows: {:.1f}% (before: {:.1f}%)\n", f.mae_fit, f.mae_before);
  if (f.mae_held_out >= 0)
    out += fmt::format("    of the {} held-out row(s): {:.1f}%\n", held, f.mae_held_out);
  if (f.mae_cv >= 0)
    out += fmt::format("    of {}-fold cross-validation: {:.1f}%\n", f.folds, f.mae_cv);
  return out;
}

} // namespace

std::string profile_value_text(const PlatformProfile& profile, const ParamSpec& spec)
{
  const double* v = profile_value(profile, spec);
  if (v == nullptr)
    return profile.name + ": (missing)";
  return fmt::format("{}: {}{}", profile.name, with_unit(*v, spec.unit),
                     plausible(spec, *v) ? "" : "  (outside the plausible range)");
}

std::size_t ties_kept(const std::vector<TieState>& states)
{
  return static_cast<std::size_t>(
      std::count_if(states.begin(), states.end(), [](const TieState& s) { return s.kept; }));
}

// The ties among the profile's costs (transports/costs.hpp CostTie): which
// it keeps, which it breaks and how.
std::string ties_text(const ParamRegistry& reg, const PlatformProfile& profile)
{
  const std::vector<TieState> states = tie_states(profile.transport, profile.costs);
  if (states.empty())
    return "";
  std::string out =
      fmt::format("  ties (costs that are the same physics, docs/cost-sources.md \"Ties\"): {} of {} kept\n",
                  ties_kept(states), states.size());
  for (const TieState& s : states)
    out += s.kept ? fmt::format("    {:<12} kept: {} = {} (situation {} .. {} {})\n", s.tie->name,
                                fmt::join(s.tie->members, " = "), format_number(profile.costs.at(s.tie->members[0])),
                                format_number(s.tie->plausible.min), format_number(s.tie->plausible.max),
                                reg.find("costs." + s.tie->members[0])->unit)
                  : fmt::format("    {:<12} BROKEN: {}\n", s.tie->name, s.why);
  return out;
}

// The profile's ensemble (calibrate --ensemble): how many members, within
// what noise, and each member cost's range over them.
std::string ensemble_text(const PlatformProfile& profile)
{
  if (!profile.ensemble)
    return "";
  const Ensemble& e = *profile.ensemble;
  std::string out = fmt::format("  ensemble: {} members fitting the rows within {}% (the values above are the central "
                                "fit; docs/calibration.md, \"Ensembles\")\n",
                                e.members.size(), format_number(e.noise_percent));
  for (const auto& [name, first] : e.members.front().costs) {
    double lo = first, hi = first;
    for (const EnsembleMember& m : e.members) {
      lo = std::min(lo, m.costs.at(name));
      hi = std::max(hi, m.costs.at(name));
    }
    const auto it = profile.costs.find(name);
    out += fmt::format("    {:<44} {:.4g} .. {:.4g} (central {})\n", "costs." + name, lo, hi,
                       it == profile.costs.end() ? std::string("-") : fmt::format("{:.4g}", it->second));
  }
  return out;
}

// The model's own error on an effect, as the profile's fit report tells it
// (effect_discrepancy): what an effect interval "with model error" adds.
std::string discrepancy_text(const PlatformProfile& profile)
{
  const auto d = effect_discrepancy(profile);
  if (!d)
    return "";
  return fmt::format(
      "  model error on an effect: sigma {:.1f}% in log ratio (rms {:.1f}% over {} pairs of its fit rows "
      "of one metric and direction, x{:.2f} for the cross-validation; docs/calibration.md, \"The "
      "model's own error on an effect\")\n",
      100 * d->sigma, 100 * d->pair_rms, d->pairs, d->inflation);
}

std::string describe_profile(const ParamRegistry& reg, const PlatformProfile& profile)
{
  std::string out;
  out += fmt::format("{}\n  transport: {}\n  {}\n", profile.name, profile.transport, profile.doc);
  out += fmt::format("  file: {}{}\n", profile.origin == "shipped" ? "shipped" : profile.origin,
                     profile.sha256.empty() ? "" : ", sha256 " + profile.sha256);
  if (!profile.base.empty())
    out += fmt::format("  base: {}\n", profile.base);
  for (const auto& [key, value] : profile.hardware)
    out += fmt::format("  {}: {}\n", key, value);
  out += fmt::format("  {:<44} {:<22} {:<28} {}\n", "cost", "value", "plausible", "source");
  for (const auto& spec : reg.all())
    if (is_cost(spec) && (scope_applies(spec.scope, profile.transport))) {
      const double* v = profile_value(profile, spec);
      out +=
          fmt::format("  {:<44} {:<22} {:<28} {}{}\n", spec.path, v == nullptr ? "(missing)" : with_unit(*v, spec.unit),
                      has_plausible_range(spec) ? plausible_text(spec) : "-", cost_source(profile, spec.path.substr(6)),
                      v != nullptr && !plausible(spec, *v) ? "  OUTSIDE" : "");
    }
  const std::vector<ImplausibleCost> outside = implausible_costs(profile);
  if (outside.empty())
    out += "  every value inside its plausible range\n";
  else
    out += fmt::format("  {} value(s) outside the plausible range (a fit standing in for a missing mechanism):\n",
                       outside.size());
  for (const ImplausibleCost& c : outside) {
    out += fmt::format("    costs.{:<30} {} (plausible {} .. {})\n", c.key, with_unit(c.value, c.unit),
                       format_number(c.plausible_min), format_number(c.plausible_max));
    if (auto it = profile.provenance.find(c.key); it != profile.provenance.end() && !it->second.reason.empty())
      out += fmt::format("      reason: {}\n", it->second.reason);
  }
  out += ties_text(reg, profile);
  out += ensemble_text(profile);
  out += discrepancy_text(profile);
  if (profile.fit)
    out += fit_summary(*profile.fit);
  out += "\n";
  return out;
}

std::string format_number(double x)
{
  if (std::isfinite(x) && std::floor(x) == x && std::fabs(x) <= 9007199254740992.0)
    return fmt::format("{}", static_cast<long long>(x));
  return fmt::format("{}", x);
}

std::string allowed_values(const ParamSpec& spec)
{
  if (!spec.allowed_text.empty())
    return spec.allowed_text;
  const bool lo = std::isfinite(spec.min), hi = std::isfinite(spec.max);
  auto range = [&](auto&& fmt_one, const std::string& what) -> std::string {
    if (lo && hi)
      return fmt_one(spec.min) + " .. " + fmt_one(spec.max);
    if (lo)
      return ">= " + fmt_one(spec.min);
    if (hi)
      return "<= " + fmt_one(spec.max);
    return what;
  };
  switch (spec.kind) {
  case ParamKind::Integer:
  case ParamKind::Number: {
    const std::string r = range([](double x) { return format_number(x); },
                                spec.kind == ParamKind::Integer ? "any integer" : "any number");
    return spec.unit.empty() ? r : r + " " + spec.unit;
  }
  case ParamKind::Size: {
    std::string r =
        range([](double x) { return format_size(static_cast<std::int64_t>(std::max(0.0, x))); }, "any size");
    return spec.choices.empty() ? r : r + ", or " + join(spec.choices, ", or ");
  }
  case ParamKind::Boolean:
    return "true, false";
  case ParamKind::Choice:
    return join(spec.choices);
  case ParamKind::Text:
    return "";
  }
  return "";
}

std::string describe_text(const ParamRegistry& reg, const std::string& topic)
{
  std::string out;
  if (topic == "platforms") {
    describe_platforms(out, reg);
    return out;
  }
  if (topic == "metrics") {
    describe_metrics(out);
    return out;
  }
  for (const auto& spec : reg.all())
    if (matches(spec.path, topic))
      describe_param(out, spec);
  if (topic.empty() || topic.rfind("search", 0) == 0)
    describe_search(out, topic);
  if (out.empty())
    throw InputError(fmt::format("describe '{}': error: unknown topic (allowed: {})", topic, join(topics(reg))));
  if (topic.empty()) {
    out += "Platforms (vsocksim describe platforms):\n\n";
    describe_platforms(out, reg);
  }
  return out;
}

std::string describe_markdown(const ParamRegistry& reg)
{
  std::string out =
      "# Parameters\n\n"
      "Generated from the parameter declarations (`app/experiment/describe.cpp`, `vsocksim describe`); do not edit.\n"
      "Keys are dotted paths: `workload.message_size` is `message_size` under `workload:` in an experiment\n"
      "file, or `--set workload.message_size=4KiB`. Sizes are integers (bytes) or a number with a unit: " +
      size_units_list() + ".\n";
  std::vector<std::string> sections; // in order of first declaration
  for (const auto& spec : reg.all())
    if (std::find(sections.begin(), sections.end(), section_of(spec.path)) == sections.end())
      sections.push_back(section_of(spec.path));
  for (const auto& section : sections) {
    out += fmt::format("\n## {}\n\n", section.empty() ? "Experiment" : "`" + section + ".*`");
    if (section == "costs") {
      out += "Defaults come from the chosen `platform` profile; an explicit `costs.X` overrides it.\n\n";
      out += "| key | unit | allowed |";
      for (const auto& p : platform_profiles())
        out += " " + p.name + " |";
      out += " meaning |\n|---|---|---|";
      for (std::size_t i = 0; i < platform_profiles().size(); ++i)
        out += "---|";
      out += "---|\n";
    } else {
      out += "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
    }
    for (const auto& spec : reg.all()) {
      if (section_of(spec.path) != section)
        continue;
      if (section == "costs") {
        out += fmt::format("| `{}` | {} | {} |", spec.path, cell(spec.unit), cell(allowed_values(spec)));
        for (const auto& p : platform_profiles()) {
          const double* v = profile_value(p, spec);
          out += " " + (v == nullptr ? std::string("-") : format_number(*v)) + " |";
        }
        out += " " + cell(spec.doc) + " |\n";
      } else {
        out += fmt::format("| `{}` | {} | {} | {} | {} |\n", spec.path, cell(type_text(spec)), cell(default_text(spec)),
                           cell(allowed_values(spec)), cell(spec.doc));
      }
    }
  }
  out += "\n## `search.*`\n\nThe section of an experiment that `vsocksim search` runs ([search.md](search.md)); a "
         "file with it has no sweep, and `run` refuses it.\n\n| key | type | default | allowed | meaning |\n"
         "|---|---|---|---|---|\n";
  for (const SearchKeyDoc& k : search_keys())
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", k.path, cell(k.type), cell(k.default_text), cell(k.allowed),
                       cell(k.doc));
  // The plausible range of every cost and what it rests on.
  out += "\n## Plausible ranges of the costs\n\nWhat one operation can physically cost on the modelled hardware "
         "(2017-2019 two-socket Xeon servers, 2.5 GHz clock); calibration searches only inside these ranges. "
         "(derived): no measurement of the quantity itself was found, the range is built from the sourced "
         "quantities named. References [Rn]: [cost-sources.md](cost-sources.md).\n\n"
         "| key | plausible | basis | sources |\n|---|---|---|---|\n";
  for (const auto& spec : reg.all())
    if (is_cost(spec) && has_plausible_range(spec))
      out += fmt::format("| `{}` | {} | {} | {} |\n", spec.path, cell(plausible_text(spec)), cell(spec.plausible_basis),
                         cell(spec.plausible_sources));
  // The ties: costs that are the same physics, and which profile keeps them.
  out +=
      "\n### Ties\n\nCosts that stand for the same physics: in a profile of the transport every member has one "
      "value, inside the situation's range (which may be narrower than a member's own); `vsocksim calibrate` fits "
      "a tie as one cost and refuses a fit that breaks one ([cost-sources.md](cost-sources.md), \"Ties\").\n\n"
      "| tie | transport | members | situation | what they share | basis | sources |\n|---|---|---|---|---|---|---|\n";
  for (const Transport& t : transports())
    for (const CostTie& tie : cost_ties(t.name)) {
      std::vector<std::string> members;
      for (const std::string& m : tie.members)
        members.push_back("`costs." + m + "`");
      out += fmt::format("| {} | {} | {} | {} .. {} | {} | {} | {} |\n", tie.name, tie.transport,
                         fmt::join(members, ", "), format_number(tie.plausible.min), format_number(tie.plausible.max),
                         cell(tie.doc), cell(tie.basis), cell(tie.sources));
    }
  out += "\n| profile | ties kept | broken |\n|---|---|---|\n";
  for (const auto& p : platform_profiles()) {
    const std::vector<TieState> states = tie_states(p.transport, p.costs);
    if (states.empty())
      continue;
    std::vector<std::string> broken;
    for (const TieState& s : states)
      if (!s.kept)
        broken.push_back(fmt::format("{}: {}", s.tie->name, s.why));
    out += fmt::format("| `{}` | {} of {} | {} |\n", p.name, ties_kept(states), states.size(),
                       broken.empty() ? std::string("-") : cell(fmt::format("{}", fmt::join(broken, "; "))));
  }
  out += "\n### Profile values outside their plausible range\n\nEach stands in for a mechanism the model lacks or "
         "misprices; a profile with one is not done.\n\n| profile | key | value | plausible |\n|---|---|---|---|\n";
  for (const auto& p : platform_profiles())
    for (const ImplausibleCost& c : implausible_costs(p))
      out += fmt::format("| `{}` | `costs.{}` | {} | {} .. {} |\n", p.name, c.key, format_number(c.value),
                         format_number(c.plausible_min), format_number(c.plausible_max));
  // Where each profile's cost values come from.
  out += "\n## Sources of the cost values\n\nAs each profile file gives them (experiments/platforms/*.yaml, "
         "[profiles.md](profiles.md)). fitted: fitted on published rows, see [calibration.md](calibration.md); held: "
         "held inside a bound of its plausible range that a fit went to, the other costs refitted around it "
         "([calibration.md](calibration.md#costs-at-a-bound-does-the-bound-hold-the-fit-back)); prior: a published "
         "figure or a plausible value (../shared/domain/costs-and-engine.md, [cost-sources.md](cost-sources.md)), not "
         "fitted, with the file's note saying which (the KVM profiles' plain-loop user cost per call is the value "
         "hyperv-2019's loop rows fit, none of their own rows measuring it); given: written by the file's author; "
         "base (NAME: SOURCE): the value of the base profile NAME, with its source; -: the profile's transport does "
         "not use it.\n\n| key |";
  for (const auto& p : platform_profiles())
    out += " " + p.name + " |";
  out += "\n|---|";
  for (std::size_t i = 0; i < platform_profiles().size(); ++i)
    out += "---|";
  out += "\n";
  for (const auto& spec : reg.all()) {
    if (!is_cost(spec))
      continue;
    out += fmt::format("| `{}` |", spec.path);
    for (const auto& p : platform_profiles())
      out += " " +
             ((scope_applies(spec.scope, p.transport)) && profile_value(p, spec) != nullptr
                  ? cost_source(p, spec.path.substr(6))
                  : std::string("-")) +
             " |";
    out += "\n";
  }
  out += "\n## Platforms\n\n| name | transport | description |\n|---|---|---|\n";
  for (const auto& p : platform_profiles())
    out += fmt::format("| `{}` | {} | {} |\n", p.name, p.transport, cell(p.doc));
  out +=
      "\n## Metrics\n\nWhat a run reports (`vsocksim describe metrics`). MB = 10^6 bytes; CPU percentages sum "
      "over CPUs (200% is two CPUs busy). A name with `<x>` stands for a CPU, thread or queue name, `{a|b}` for "
      "one of the words. *Extrapolated as*: how `sim.run_length: auto` continues the figure from the steady "
      "state ([run-length.md](run-length.md)).\n\n| metric | unit | extrapolated as | meaning |\n|---|---|---|---|\n";
  for (const MetricDoc& d : metric_docs())
    out += fmt::format("| `{}` | {} | {} | {} |\n", cell(d.name), cell(d.unit), scaling_text(d.scaling), cell(d.doc));
  return out;
}

} // namespace vsim::app
