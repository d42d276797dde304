// Loading and checking a calibration: the experiment, its rows, --fit,
// --hold-out and --folds, all before anything runs.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "app/calibrate/calibrate.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/registry.hpp"
#include "app/experiment/text.hpp"
#include "app/experiment/units.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

namespace {

std::string lower(std::string s)
{
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split(const std::string& text, char sep)
{
  std::vector<std::string> out;
  std::size_t from = 0;
  while (true) {
    const std::size_t at = text.find(sep, from);
    out.push_back(text.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos)
      return out;
    from = at + 1;
  }
}

// Two spellings of one value: equal as text (any case) or as sizes
// ("65536" and "64KiB").
bool same_value(const std::string& a, const std::string& b)
{
  if (lower(a) == lower(b))
    return true;
  const auto x = parse_size(a), y = parse_size(b);
  return x && y && *x == *y;
}

// The experiment keys the rows name (columns before `metric`), in order.
std::vector<std::string> row_keys(const std::vector<Measurement>& rows)
{
  std::vector<std::string> keys;
  for (const Measurement& m : rows)
    for (const auto& [k, v] : m.keys)
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        keys.push_back(k);
  return keys;
}

// The measurements files of the experiments, for messages: "a.csv" or
// "a.csv and b.csv".
std::string files_text(const CalibrationInput& in)
{
  std::vector<std::string> files;
  for (const Study& s : in.studies)
    files.push_back(s.measurements_file);
  return join(files, " and ");
}

HoldOut parse_hold_out(const std::string& text, const Study& s)
{
  HoldOut h{text, {}};
  for (const std::string& pair : split(text, ',')) {
    const std::size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size())
      throw InputError(
          fmt::format("--hold-out {}: error: '{}' is not KEY=VALUE (allowed: KEY=VALUE[,KEY=VALUE]...)", text, pair));
    const std::string key = pair.substr(0, eq);
    if (registry().find(key) == nullptr || !s.ex.base.has(key))
      throw InputError(fmt::format("--hold-out {}: error: unknown key '{}' (allowed: experiment keys, e.g. those "
                                   "the rows name: {})",
                                   text, key, join(row_keys(s.measurements), ", ")));
    h.pairs.emplace_back(key, pair.substr(eq + 1));
  }
  return h;
}

// Whether row `m` (matched to point `p`) matches every pair of `h`: by the
// row's own cell when it names the key, else by the point's value.
bool matches(const HoldOut& h, const Measurement& m, const Point& p)
{
  for (const auto& [key, value] : h.pairs) {
    const std::string cell = m.value_of(key);
    const std::string have = cell.empty() ? value_to_string(p.params.get(key)) : cell;
    if (!same_value(have, value))
      return false;
  }
  return true;
}

void assign_rows(CalibrationInput& in)
{
  std::vector<bool> any(in.holds.size(), false);
  for (std::size_t i = 0; i < in.rows.size(); ++i) {
    const Point& p = in.point(i);
    bool held = false;
    for (std::size_t h = 0; h < in.holds.size(); ++h)
      if (matches(in.holds[h], in.measurement(i), p))
        held = any[h] = true;
    (held ? in.held_rows : in.fit_rows).push_back(i);
  }
  for (std::size_t h = 0; h < in.holds.size(); ++h)
    if (!any[h])
      throw InputError(fmt::format("--hold-out {}: error: matches no row of {} (allowed: a filter that some row "
                                   "matches)",
                                   in.holds[h].text, files_text(in)));
  if (in.fit_rows.empty())
    throw InputError(fmt::format("--hold-out: error: the filters hold out all {} row(s) of {}: nothing is left to "
                                 "fit (allowed: filters that leave at least one row)",
                                 in.rows.size(), files_text(in)));
}

// The names of the costs `transport`'s runs charge (its own and the shared).
std::vector<std::string> transport_cost_names(const std::string& transport)
{
  std::vector<std::string> out;
  for (const CostDecl& d : all_cost_decls())
    if (scope_applies(d.scope, transport))
      out.push_back(d.name);
  return out;
}

const CostDecl* find_cost(const std::string& name)
{
  static const std::vector<CostDecl> decls = all_cost_decls();
  for (const CostDecl& d : decls)
    if (name == d.name)
      return &d;
  return nullptr;
}

// The value every point has for cost `name`; a cost the sweep varies
// cannot be fitted to one value.
double start_value(const Experiment& ex, const std::string& name)
{
  const std::string key = "costs." + name;
  const double v = ex.base.number(key);
  for (const Point& p : ex.points)
    if (p.params.number(key) != v)
      throw InputError(fmt::format("--fit {}: error: {} is swept by {} (allowed: costs with one value on every "
                                   "point)",
                                   name, key, ex.file));
  return v;
}

std::vector<FitCost> named_costs(const CalibrationInput& in, const std::vector<std::string>& fit)
{
  const std::string transport = in.study().ex.base.text("transport");
  std::set<std::string> seen;
  std::vector<FitCost> out;
  for (const std::string& raw : fit) {
    const std::string name = raw.rfind("costs.", 0) == 0 ? raw.substr(6) : raw;
    const CostDecl* d = find_cost(name);
    if (d == nullptr)
      throw InputError(fmt::format("--fit {}: error: unknown cost (allowed for {}: {})", raw, transport,
                                   join(transport_cost_names(transport), ", ")));
    if (!scope_applies(d->scope, transport))
      throw InputError(fmt::format("--fit {}: error: a cost of {}, not of {}, the experiment's transport (allowed: "
                                   "{})",
                                   raw, scope_text(d->scope), transport, join(transport_cost_names(transport), ", ")));
    if (!(d->plausible_max > d->plausible_min))
      throw InputError(fmt::format("--fit {}: error: its plausible range {:g} .. {:g} has no width (allowed: costs "
                                   "with a plausible range)",
                                   raw, d->plausible_min, d->plausible_max));
    if (seen.insert(name).second)
      out.push_back(fit_cost(*d, start_value(in.study().ex, name), transport));
  }
  // A tie is one cost: two of its members named is one too many.
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = i + 1; j < out.size(); ++j)
      if (!out[i].tie.empty() && out[i].tie == out[j].tie)
        throw InputError(fmt::format("--fit: error: {} and {} are tied ({}: the same physics, fitted as one cost; "
                                     "docs/cost-sources.md \"Ties\") (allowed: one member of a tie)",
                                     out[i].decl.name, out[j].decl.name, out[i].tie));
  // Declaration order, whatever order --fit gave.
  std::vector<FitCost> ordered;
  for (const CostDecl& d : all_cost_decls())
    for (const FitCost& c : out)
      if (c.decl.name == std::string(d.name))
        ordered.push_back(c);
  return ordered;
}

void check_folds(const CalibrationInput& in, unsigned folds, std::size_t costs)
{
  const std::size_t n = in.fit_rows.size();
  if (folds == 1 || folds > n)
    throw InputError(fmt::format("--folds {}: error: {} (allowed: 0 for none, or 2 to {}, the fit rows)", folds,
                                 folds == 1 ? "one fold leaves no row to fit on" : "more folds than fit rows",
                                 std::max<std::size_t>(n, 2)));
  if (costs > n)
    throw InputError(fmt::format("--fit: error: {} costs for {} fit row(s) (allowed: at most as many costs as fit "
                                 "rows)",
                                 costs, n));
}

} // namespace

FitCost fit_cost(const CostDecl& d, double start, const std::string& transport)
{
  FitCost c{d, start, "", {}};
  const CostTie* tie = tie_of(d.name, transport);
  if (tie == nullptr)
    return c;
  c.tie = tie->name;
  for (const std::string& m : tie->members)
    if (m != d.name)
      c.tied.push_back(m);
  c.decl.plausible_min = std::max(d.plausible_min, tie->plausible.min);
  c.decl.plausible_max = std::min(d.plausible_max, tie->plausible.max);
  return c;
}

std::string candidate_rule(const CostDecl& d, const std::string& transport)
{
  const std::string unit = d.unit;
  if (!scope_applies(d.scope, transport))
    return fmt::format("a cost of {}", scope_text(d.scope));
  if (unit == "GHz")
    return "the platform clock: every cycle figure is counted in it, so it moves with all of them";
  if (unit == "fraction")
    return "a jitter: it shapes the spread over iterations, not the mean a row measures";
  if (unit != "cycles" && unit != "cycles latency" && unit != "bytes/cycle")
    return fmt::format("unit {}: neither a CPU cost, a latency nor a bandwidth", unit);
  if (!(d.plausible_max > d.plausible_min))
    return "its plausible range has no width";
  // A tie's members move together: its first member stands for them.
  if (const CostTie* tie = tie_of(d.name, transport); tie != nullptr && tie->members.front() != d.name)
    return fmt::format("tied to {} ({}: the same physics), fitted with it as one cost", tie->members.front(),
                       tie->name);
  return "";
}

std::vector<std::vector<std::size_t>> fold_rows(std::size_t fit_rows, unsigned k)
{
  std::vector<std::vector<std::size_t>> folds(k);
  for (std::size_t j = 0; k > 0 && j < fit_rows; ++j)
    folds[j % k].push_back(j);
  return folds;
}

double mae_percent(const std::vector<double>& predicted, const std::vector<double>& measured,
                   const std::vector<std::size_t>& rows)
{
  if (rows.empty())
    return -1;
  double sum = 0;
  for (std::size_t r : rows)
    sum += std::fabs(predicted.at(r) / measured.at(r) - 1);
  return 100 * sum / static_cast<double>(rows.size());
}

std::vector<double> measured_values(const CalibrationInput& in)
{
  std::vector<double> out;
  for (std::size_t i = 0; i < in.rows.size(); ++i) {
    const Measurement& m = in.measurement(i);
    out.push_back(m.stats.count("mean") ? m.stats.at("mean") : m.stats.at("median"));
  }
  return out;
}

std::string CalibrationInput::study_prefix(std::size_t row) const
{
  return studies.size() > 1 ? studies.at(rows.at(row).study).ex.name + ": " : std::string();
}

std::string CalibrationInput::row_label(std::size_t row) const
{
  const Measurement& m = measurement(row);
  const std::string keys = m.keys_text();
  return study_prefix(row) + keys + (keys.empty() ? "" : ": ") + m.metric;
}

bool CalibrationInput::is_fit(std::size_t row) const
{
  return std::find(fit_rows.begin(), fit_rows.end(), row) != fit_rows.end();
}

std::map<std::string, double> fitted_values(const std::vector<FitCost>& costs, const std::vector<double>& values)
{
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    out[costs[i].decl.name] = values.at(i);
    for (const std::string& m : costs[i].tied)
      out[m] = values[i];
  }
  return out;
}

CalibrationInput load_calibration(const std::vector<std::string>& files, const CalibrateOptions& opt)
{
  CalibrationInput in;
  in.studies = load_studies(files, opt.sets);
  const std::string platform = in.study().ex.base.text("platform");
  in.start = find_profile(platform);
  if (in.start == nullptr)
    throw InputError(fmt::format("{}: error: platform {}: no such profile (allowed: a shipped profile or a profile "
                                 "file)",
                                 in.study().file, platform));
  const std::string transport = in.study().ex.base.text("transport");
  // A joint fit is of one machine: one start, one transport, the same costs.
  for (const Study& s : in.studies) {
    if (find_profile(s.ex.base.text("platform")) != in.start || s.ex.base.text("transport") != transport)
      throw InputError(fmt::format("{}: error: platform {} ({}) is not {}'s {} ({}) (allowed: experiments of one "
                                   "machine in one fit: the same platform and transport)",
                                   s.file, s.ex.base.text("platform"), s.ex.base.text("transport"), in.study().file,
                                   platform, transport));
    for (const CostDecl& d : all_cost_decls()) {
      const std::string key = std::string("costs.") + d.name;
      if (s.ex.base.has(key) && in.study().ex.base.has(key) && s.ex.base.number(key) != in.study().ex.base.number(key))
        throw InputError(fmt::format("{}: error: {} is {} there and {} in {} (allowed: the same value in every "
                                     "experiment of one fit)",
                                     s.file, key, s.ex.base.number(key), in.study().ex.base.number(key),
                                     in.study().file));
    }
    const std::size_t j = static_cast<std::size_t>(&s - in.studies.data());
    const std::vector<long> point_of = match_measurements(s.ex, s.measurements, s.measurements_file);
    for (std::size_t m = 0; m < s.measurements.size(); ++m)
      in.rows.push_back({j, m, point_of[m]});
  }
  for (const std::string& h : opt.hold_out)
    in.holds.push_back(parse_hold_out(h, in.study()));
  assign_rows(in);
  if (!opt.fit.empty()) {
    in.named = named_costs(in, opt.fit);
    for (const FitCost& c : in.named)
      in.candidates.push_back(c.decl);
  } else {
    for (const CostDecl& d : all_cost_decls()) {
      const std::string why = candidate_rule(d, transport);
      if (why.empty())
        in.candidates.push_back(d);
      else if (scope_applies(d.scope, transport))
        in.excluded.emplace_back(d.name, why);
    }
  }
  check_folds(in, opt.folds, in.named.size());
  return in;
}

} // namespace vsim::app
