// The printed report of a calibration (calibration_text).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/calibrate/calibrate.hpp"
#include "app/calibrate/identify.hpp"
#include "app/report/results.hpp"

namespace vsim::app {

namespace {

std::string number(double v)
{
  if (!std::isfinite(v))
    return "-";
  return std::fabs(v) >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
}

std::string error_text(double predicted, double measured)
{
  return std::isfinite(predicted) ? fmt::format("{:+.1f}%", 100 * (predicted / measured - 1)) : "-";
}

std::string mae_text(double mae)
{
  return mae < 0 ? "-" : fmt::format("{:.1f}%", mae);
}

std::string elasticity_section(const CalibrationInput& in, const CalibrationResult& r)
{
  if (r.elasticity_costs.empty())
    return "";
  std::string out = fmt::format("sensitivity: elasticity d ln(predicted) / d ln(cost) of each fit row, each cost "
                                "{:g}x (columns c1..c{}, named below)\n",
                                kPerturbation, r.elasticity_costs.size());
  std::vector<std::vector<std::string>> t;
  std::vector<std::string> head = {"row"};
  for (std::size_t c = 0; c < r.elasticity_costs.size(); ++c)
    head.push_back(fmt::format("c{}", c + 1));
  t.push_back(head);
  for (std::size_t i = 0; i < in.fit_rows.size(); ++i) {
    std::vector<std::string> line = {std::to_string(in.fit_rows[i] + 1)};
    for (double e : r.elasticity[i])
      line.push_back(std::fabs(e) < 0.005 ? "0" : fmt::format("{:+.2f}", e));
    t.push_back(line);
  }
  out += render_columns(t);
  for (std::size_t c = 0; c < r.elasticity_costs.size(); ++c) {
    const std::string& name = r.elasticity_costs[c];
    const bool fitted =
        std::any_of(r.fitted.begin(), r.fitted.end(), [&](const FitCost& f) { return f.decl.name == name; });
    std::string why = "fitted";
    for (const auto& [n, w] : r.not_fitted)
      if (n == name)
        why = "not fitted: " + w;
    out += fmt::format("  c{} {}: {}\n", c + 1, name, fitted ? "fitted" : why);
  }
  return out + "\n";
}

std::string excluded_section(const CalibrationInput& in)
{
  if (in.excluded.empty())
    return "";
  std::string out = "not candidates (the rule: CPU costs, latencies and bandwidths of the transport; not the clock, "
                    "not the jitters):\n";
  for (const auto& [name, why] : in.excluded)
    if (why.rfind("a cost of ", 0) != 0) // another transport's: not worth a line each
      out += fmt::format("  {}: {}\n", name, why);
  return out + "\n";
}

std::string rows_section(const CalibrationInput& in, const CalibrationResult& r)
{
  const std::vector<double> measured = measured_values(in);
  std::vector<std::vector<std::string>> t = {
      {"#", "role", "row", "measured", "before", "error", "after", "error", "fold", "fold error"}};
  const auto folds = fold_rows(in.fit_rows.size(), static_cast<unsigned>(r.fold_after.size()));
  for (std::size_t i = 0; i < in.rows.size(); ++i) {
    const auto fit = std::find(in.fit_rows.begin(), in.fit_rows.end(), i); // its position: the fold
    std::string fold = "-", fold_error = "-";
    if (fit != in.fit_rows.end() && !r.fold_after.empty()) {
      const std::size_t k = static_cast<std::size_t>(fit - in.fit_rows.begin()) % r.fold_after.size();
      fold = std::to_string(k + 1);
      fold_error = error_text(r.fold_after[k][i], measured[i]);
    }
    t.push_back({std::to_string(i + 1), fit != in.fit_rows.end() ? "fit" : "held-out", in.row_label(i),
                 number(measured[i]), number(r.before[i]), error_text(r.before[i], measured[i]), number(r.after[i]),
                 error_text(r.after[i], measured[i]), fold, fold_error});
  }
  return render_columns(t) + "\n";
}

std::string moves_section(const CalibrationResult& r)
{
  if (r.moves.empty())
    return "costs moved: none\n";
  std::vector<std::vector<std::string>> t = {{"cost", "unit", "before", "after", "change", "plausible", "at bound"}};
  std::string ties;
  for (const CostMove& m : r.moves) {
    t.push_back({m.name + (m.tie.empty() ? "" : " (tie " + m.tie + ")"), m.unit, number(m.before), number(m.after),
                 m.before > 0 ? fmt::format("{:+.1f}%", 100 * (m.after / m.before - 1)) : "-",
                 fmt::format("{:g} .. {:g}", m.plausible_min, m.plausible_max), m.at_bound ? "yes" : "no"});
    if (!m.tie.empty())
      ties += fmt::format("  tie {}: {} moved with {} (the same value; the range is the situation's)\n", m.tie,
                          fmt::format("{}", fmt::join(m.tied, ", ")), m.name);
  }
  return "costs moved:\n" + render_columns(t) + ties;
}

// The p-th quantile (0..1) of `v` by linear interpolation between order
// statistics.
double quantile(std::vector<double> v, double p)
{
  std::sort(v.begin(), v.end());
  const double at = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::string ensemble_section(const CalibrationResult& r)
{
  if (r.draw_objectives.empty())
    return "";
  std::string out =
      fmt::format("\nensemble: {} member(s) within the noise band from {} draw(s) (band: mean squared "
                  "log error <= {:.3g}; the central fit's {:.3g}; each row's noise {:.3g}%)\n",
                  r.members.size(), r.draw_objectives.size(), r.band, r.central_objective, 100 * r.noise_used);
  std::vector<std::string> draws;
  for (double o : r.draw_objectives)
    draws.push_back(fmt::format("{:.3g}", o));
  out += fmt::format("each draw's: {}\n", fmt::join(draws, " "));
  if (r.members.size() < 2)
    return out + "  fewer than two members: no ensemble written\n";
  std::vector<std::vector<std::string>> t = {{"cost", "central", "p10", "p50", "p90", "spread (p90/p10)"}};
  for (std::size_t i = 0; i < r.ensemble_costs.size(); ++i) {
    std::vector<double> v;
    for (const auto& m : r.members)
      v.push_back(m[i]);
    const double p10 = quantile(v, 0.1), p90 = quantile(v, 0.9);
    t.push_back({std::string(r.ensemble_costs[i].decl.name) + (i < r.fitted.size() ? "" : " (not fitted)"),
                 number(r.ensemble_centre[i]), number(p10), number(quantile(v, 0.5)), number(p90),
                 p10 > 0 ? fmt::format("x{:.2f}", p90 / p10) : "-"});
  }
  out += render_columns(t);
  out += fmt::format("members' mean absolute error on the fit rows: {} .. {} (one iteration per point)\n",
                     mae_text(*std::min_element(r.member_mae.begin(), r.member_mae.end())),
                     mae_text(*std::max_element(r.member_mae.begin(), r.member_mae.end())));
  return out;
}

std::string summary_section(const CalibrationInput& in, const CalibrationResult& r)
{
  std::vector<std::string> iterations;
  for (const Study& s : in.studies)
    iterations.push_back(std::to_string(s.ex.base.integer("iterations")));
  std::string out =
      fmt::format("fit rows: {} row(s), mean absolute error {} before, {} after ({} iteration(s) per "
                  "point)\n",
                  in.fit_rows.size(), mae_text(r.mae_before), mae_text(r.mae_fit), fmt::join(iterations, " / "));
  if (!in.held_rows.empty()) {
    const std::vector<double> measured = measured_values(in);
    out += fmt::format("held-out rows: {} row(s), mean absolute error {} before, {} after\n", in.held_rows.size(),
                       mae_text(mae_percent(r.before, measured, in.held_rows)), mae_text(r.mae_held_out));
  }
  if (r.mae_cv >= 0) {
    std::string per;
    for (std::size_t k = 0; k < r.fold_mae.size(); ++k)
      per += fmt::format("{}fold {}: {}", k == 0 ? "" : ", ", k + 1, mae_text(r.fold_mae[k]));
    out += fmt::format("{}-fold cross-validation: mean absolute error {} on the rows each fold's fit left out ({})\n",
                       r.fold_mae.size(), mae_text(r.mae_cv), per);
  }
  std::size_t points = 0;
  for (const Study& s : in.studies)
    points += s.ex.points.size();
  out += fmt::format("optimiser: {}, {} evaluation(s) of the {} point(s) in all; the main search stopped on: {}\n",
                     r.optimiser, r.evaluations, points, r.search_stop);
  if (r.kept_why == "search")
    out += "no point the search found beat the starting values with the experiment's own iterations: kept\n";
  else if (r.kept_why == "cross-validation")
    out += fmt::format("the fit does not predict the rows it did not see better than the start does ({}-fold "
                       "cross-validation {} against the start's {}): the rows cannot pin down what it moved, so the "
                       "starting values are kept (--keep-unvalidated writes the fit)\n",
                       r.fold_mae.size(), mae_text(r.mae_cv), mae_text(r.mae_before));
  return out;
}

} // namespace

std::string calibration_text(const CalibrationInput& in, const CalibrationResult& r)
{
  std::string out;
  for (std::size_t j = 0; j < in.studies.size(); ++j) {
    const Study& s = in.studies[j];
    std::size_t fit = 0, held = 0;
    for (std::size_t i = 0; i < in.rows.size(); ++i)
      if (in.rows[i].study == j)
        ++(in.is_fit(i) ? fit : held);
    out +=
        fmt::format("calibrate: {} ({} point(s); figures {}: {} row(s), {} fit, {} held out); starting "
                    "profile {}\n",
                    s.file, s.ex.points.size(), s.measurements_file, s.measurements.size(), fit, held, in.start->name);
  }
  out += in.studies.size() > 1 ? fmt::format("one joint fit of the {} experiments' rows\n\n", in.studies.size()) : "\n";
  out += excluded_section(in) + elasticity_section(in, r) + rows_section(in, r) + summary_section(in, r) + "\n" +
         moves_section(r) + ensemble_section(r);
  return out;
}

} // namespace vsim::app
