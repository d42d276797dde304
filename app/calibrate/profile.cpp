// The profile a calibration writes, and the span of the data it was fitted
// on.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/calibrate/calibrate.hpp"
#include "app/experiment/profile_file.hpp"
#include "app/report/calibration_span.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

namespace {

void widen(CalibratedSpan& s, const std::string& dir, const std::string& name, double v)
{
  auto [it, fresh] = s[dir].try_emplace(name, v, v);
  if (!fresh) {
    it->second.first = std::min(it->second.first, v);
    it->second.second = std::max(it->second.second, v);
  }
}

// A row's figure in MB/s when it is a throughput (0 when it is not one).
double throughput_mbps(const Measurement& m)
{
  const double scale = m.metric == "throughput_MBps" ? 1.0 : m.metric == "throughput_Gbps" ? 125.0 : 0.0;
  return scale * (m.stats.count("mean") ? m.stats.at("mean") : m.stats.at("median"));
}

// A profile of another name than its shipped start is another machine's
// (issue 51, item 3): it says only what was given of its machine, and where
// its costs come from. A start given as a file (a profile's own start, such
// as experiments/calibration/platforms/kvm-2024-start.yaml) describes the
// machine being fitted: its machine, description and costs are kept.
bool new_machine(const CalibrationInput& in, const CalibrateOptions& opt)
{
  return in.start->name != opt.name && in.start->origin == "shipped";
}

// "cpu X, host_kernel Y" of a profile's hardware, or "not given".
std::string machine_text(const std::vector<std::pair<std::string, std::string>>& hardware)
{
  std::vector<std::string> parts;
  for (const auto& [key, value] : hardware)
    if (key == "cpu" || key == "host_kernel" || key == "guest_kernel")
      parts.push_back(key + " " + value);
  return parts.empty() ? "its machine not given" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string description(const CalibrationInput& in, const CalibrateOptions& opt, const CalibrationResult& r)
{
  if (new_machine(in, opt))
    return fmt::format("Calibrated by vsocksim calibrate on {} row(s) of {} ({} cost(s) fitted, mean absolute error "
                       "{:.1f}% -> {:.1f}%), starting from profile {}: the costs not fitted are {}'s, measured on "
                       "another machine ({}).",
                       in.fit_rows.size(), opt.experiment_arg, r.fitted.size(), r.mae_before, r.mae_fit, in.start->name,
                       in.start->name, machine_text(in.start->hardware));
  // A profile calibrated before says so once: the earlier sentence goes,
  // unless this is a further step of the same profile's fit.
  std::string d = in.start->doc;
  const std::size_t at = d.find("Calibrated by vsocksim calibrate");
  if (at != std::string::npos && in.start->name == opt.name)
    return fmt::format("{} Then by vsocksim calibrate from that on {} row(s) of {} ({} cost(s) fitted, mean "
                       "absolute error {:.1f}% -> {:.1f}%).",
                       d, in.fit_rows.size(), opt.experiment_arg, r.fitted.size(), r.mae_before, r.mae_fit);
  if (at != std::string::npos) {
    d.erase(at);
    while (!d.empty() && d.back() == ' ')
      d.pop_back();
  }
  return fmt::format("{}{}Calibrated by vsocksim calibrate from {} on {} row(s) of {} ({} cost(s) fitted, mean "
                     "absolute error {:.1f}% -> {:.1f}%).",
                     d,
                     d.empty()         ? ""
                     : d.back() == '.' ? " "
                                       : ". ",
                     in.start->name, in.fit_rows.size(), opt.experiment_arg, r.fitted.size(), r.mae_before, r.mae_fit);
}

std::vector<FitRow> fit_rows(const CalibrationInput& in, const CalibrationResult& r)
{
  const std::vector<double> measured = measured_values(in);
  std::vector<FitRow> rows;
  for (std::size_t i = 0; i < in.rows.size(); ++i) {
    const Measurement& m = in.measurement(i);
    rows.push_back({in.study_prefix(i) + m.keys_text(), m.metric, in.is_fit(i) ? "fit" : "held-out", measured[i],
                    r.before[i], r.after[i]});
  }
  return rows;
}

// The experiments' validation.measurements, as they name them.
std::string measurements_text(const CalibrationInput& in)
{
  std::vector<std::string> files;
  for (const Study& s : in.studies)
    files.push_back(s.ex.base.text("validation.measurements"));
  return fmt::format("{}", fmt::join(files, ", "));
}

FitReport report(const CalibrationInput& in, const CalibrateOptions& opt, const CalibrationResult& r)
{
  FitReport f;
  f.experiment = opt.experiment_arg;
  f.measurements = measurements_text(in);
  f.optimiser = r.optimiser;
  for (const FitCost& c : r.fitted)
    f.fitted.push_back(c.decl.name);
  f.not_fitted = r.not_fitted;
  f.hold_out = opt.hold_out;
  f.folds = opt.folds;
  f.evaluations = r.evaluations;
  f.mae_before = r.mae_before;
  f.mae_fit = r.mae_fit;
  f.mae_held_out = r.mae_held_out;
  f.mae_cv = r.mae_cv;
  f.rows = fit_rows(in, r);
  return f;
}

// Where a value that was not fitted comes from: the starting profile's
// provenance when the experiment left it as the profile has it; for a new
// machine's profile, the start's value named as such.
CostProvenance kept_provenance(const CalibrationInput& in, const CalibrateOptions& opt, const std::string& key,
                               double value)
{
  const PlatformProfile& s = *in.start;
  const auto v = s.costs.find(key);
  if (v != s.costs.end() && v->second == value) {
    const auto p = s.provenance.find(key);
    if (new_machine(in, opt))
      return {"base",
              p == s.provenance.end() ? fmt::format("profile {}'s value", s.name)
                                      : fmt::format("profile {}'s value ({}{}{})", s.name, p->second.source,
                                                    p->second.note.empty() ? "" : ": ", p->second.note),
              p == s.provenance.end() ? "" : p->second.reason};
    if (p != s.provenance.end())
      return p->second;
    return {"given", fmt::format("profile {}", s.name), ""};
  }
  return {"given", fmt::format("set by the calibration experiment {}", in.study().file), ""};
}

} // namespace

CalibratedSpan calibrated_span(const Experiment& ex, const std::vector<Measurement>& rows,
                               const std::vector<long>& point_of, const std::vector<std::size_t>& use)
{
  CalibratedSpan s;
  std::vector<bool> seen(ex.points.size(), false);
  for (std::size_t i : use) {
    const Point& p = ex.points.at(static_cast<std::size_t>(point_of.at(i)));
    const std::string dir = p.params.text("direction");
    if (!seen[p.index]) {
      seen[p.index] = true;
      for (const auto& [name, v] : calibration_quantities(p.params))
        widen(s, dir, name, v);
    }
    if (const double t = throughput_mbps(rows[i]); t > 0)
      widen(s, dir, "throughput_MBps", t);
  }
  return s;
}

CalibratedSpan merged_spans(CalibratedSpan a, const CalibratedSpan& b)
{
  for (const auto& [dir, quantities] : b)
    for (const auto& [name, range] : quantities) {
      widen(a, dir, name, range.first);
      widen(a, dir, name, range.second);
    }
  return a;
}

std::vector<std::string> refusals(const CalibrationResult& r, const PlatformProfile& p, const CalibrateOptions& opt)
{
  std::vector<std::string> out;
  if (!opt.allow_bound && !r.kept_start)
    for (const CostMove& m : r.moves)
      if (m.at_bound)
        out.push_back(fmt::format("costs.{} = {} sits on a bound of its plausible range {} .. {} {}: the fit is "
                                  "standing in for a mechanism the model lacks or misprices (--allow-bound writes it "
                                  "all the same, its source `held`)",
                                  m.name, m.after, m.plausible_min, m.plausible_max, m.unit));
  if (!opt.allow_broken_ties)
    for (const TieState& s : tie_states(p.transport, p.costs))
      if (!s.kept)
        out.push_back(fmt::format("tie {} is broken: {} (fit one of its members, or start from a profile that "
                                  "keeps it; --allow-broken-ties writes it all the same)",
                                  s.tie->name, s.why));
  return out;
}

namespace {

// The ensemble of the result: each member's costs (a tie's every member
// with its value), equal weights; none with fewer than two members.
std::optional<Ensemble> ensemble_of(const CalibrateOptions& opt, const CalibrationResult& r)
{
  if (r.members.size() < 2)
    return std::nullopt;
  Ensemble e;
  e.noise_percent = 100 * r.noise_used;
  e.method = fmt::format("{} member(s) of {} draw(s) from the fit's linearised posterior over {} cost(s) ({} "
                         "fitted{}; --ensemble-costs {}) (slopes at the central fit, each row's noise {:.3g}%: "
                         "--noise {}% or the central fit's rms log error if larger; a prior of a quarter of each "
                         "plausible range), each kept when its mean squared log error over "
                         "the fit rows is at most the central fit's plus (costs varied) x noise^2 / (fit rows) "
                         "({:.3g} <= {:.3g})",
                         r.members.size(), r.draw_objectives.size(), r.ensemble_costs.size(), r.fitted.size(),
                         opt.ensemble_only ? ", not moved: --ensemble-only" : "", opt.ensemble_costs,
                         100 * r.noise_used, opt.noise_percent, r.central_objective, r.band);
  for (const std::vector<double>& values : r.members)
    e.members.push_back({1.0 / static_cast<double>(r.members.size()), fitted_values(r.ensemble_costs, values)});
  return e;
}

} // namespace

PlatformProfile calibrated_profile(const CalibrationInput& in, const CalibrateOptions& opt, const CalibrationResult& r)
{
  if (opt.ensemble_only) { // the start as it is, with the ensemble around it
    PlatformProfile p = *in.start;
    p.name = opt.name;
    p.origin.clear();
    p.sha256.clear();
    p.ensemble = ensemble_of(opt, r);
    return p;
  }
  PlatformProfile p;
  p.name = opt.name;
  p.transport = in.study().ex.base.text("transport");
  p.doc = description(in, opt, r);
  // The machine: the start's when this is its refit, else only what
  // --hardware gives; --hardware's entries replace the start's.
  if (!new_machine(in, opt))
    p.hardware = in.start->hardware;
  for (const auto& entry : opt.hardware) {
    auto it = std::find_if(p.hardware.begin(), p.hardware.end(), [&](const auto& h) { return h.first == entry.first; });
    if (it != p.hardware.end())
      it->second = entry.second;
    else
      p.hardware.push_back(entry);
  }
  // Every key said, so that nothing of the base's machine is inherited.
  if (new_machine(in, opt))
    for (const std::string& key : hardware_keys())
      if (std::none_of(p.hardware.begin(), p.hardware.end(), [&](const auto& h) { return h.first == key; }))
        p.hardware.emplace_back(key, "not given");
  std::stable_sort(p.hardware.begin(), p.hardware.end(), [](const auto& a, const auto& b) {
    const auto& keys = hardware_keys();
    return std::find(keys.begin(), keys.end(), a.first) < std::find(keys.begin(), keys.end(), b.first);
  });
  // What is not fitted still comes from the base, and follows it when it is
  // remade; a new machine's profile starts from its start (shipped: by
  // name).
  p.base = new_machine(in, opt) ? in.start->name : in.start->base;
  for (const auto& [key, start_value] : in.start->costs) {
    const std::string path = "costs." + key;
    const double value = in.study().ex.base.has(path) ? in.study().ex.base.number(path) : start_value;
    p.costs[key] = value;
    p.provenance[key] = kept_provenance(in, opt, key, value);
  }
  const std::string rows =
      fmt::format("{} row(s) of {} ({})", in.fit_rows.size(), opt.experiment_arg, measurements_text(in));
  // A fit that kept the start moved nothing: the values keep their sources.
  for (const CostMove& m : r.kept_start ? std::vector<CostMove>{} : r.moves) {
    p.costs[m.name] = m.after;
    p.provenance[m.name] = {m.at_bound ? "held" : "fitted",
                            fmt::format("{} on {}{}{}", r.optimiser, rows,
                                        m.tie.empty() ? "" : fmt::format(" (tie {})", m.tie),
                                        m.at_bound ? "; at a bound of its plausible range" : ""),
                            ""};
    for (const std::string& other : m.tied) {
      p.costs[other] = m.after;
      p.provenance[other] = {m.at_bound ? "held" : "fitted",
                             fmt::format("tied to {} ({}: the same physics, docs/cost-sources.md \"Ties\"), fitted "
                                         "with it by {} on {}",
                                         m.name, m.tie, r.optimiser, rows),
                             ""};
    }
  }
  p.calibrated = {};
  for (std::size_t j = 0; j < in.studies.size(); ++j) {
    const Study& s = in.studies[j];
    std::vector<long> point_of(s.measurements.size(), 0);
    std::vector<std::size_t> use;
    for (std::size_t i = 0; i < in.rows.size(); ++i)
      if (in.rows[i].study == j) {
        point_of.at(in.rows[i].m) = in.rows[i].point;
        if (in.is_fit(i))
          use.push_back(in.rows[i].m);
      }
    p.calibrated = merged_spans(p.calibrated, calibrated_span(s.ex, s.measurements, point_of, use));
  }
  // A further step of the same profile's fit (e.g. kvm-2024's latency rows
  // after its throughput rows): its costs rest on both steps' data.
  if (in.start->name == opt.name)
    p.calibrated = merged_spans(in.start->calibrated, p.calibrated);
  p.fit = report(in, opt, r);
  p.ensemble = ensemble_of(opt, r);
  return p;
}

} // namespace vsim::app
