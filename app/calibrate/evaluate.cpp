#include "app/calibrate/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace vsim::app {

Evaluator::Evaluator(const CalibrationInput& in, const CalibrateHooks& hooks) : in_(in), hooks_(hooks) {}

double Evaluator::seconds_per_iteration_set() const
{
  return iteration_sets_ > 0 ? seconds_ / iteration_sets_ : 0;
}

namespace {

// The points of `ex` with the costs of `set` and `iterations` per point
// (0: as they are), appended to `all` renumbered.
void append_points(Experiment& all, const Experiment& ex, const CostValues& set, unsigned iterations, unsigned shrink)
{
  for (const Point& p : ex.points) {
    Point q = p;
    if (shrink > 1) {
      const std::int64_t total = p.params.integer("workload.total_bytes");
      q.params.set("workload.total_bytes",
                   std::max<std::int64_t>(p.params.integer("workload.message_size"), total / shrink));
    }
    for (const auto& [name, value] : set)
      q.params.set("costs." + name, value);
    if (iterations > 0)
      q.params.set("iterations", static_cast<std::int64_t>(iterations));
    q.index = all.points.size();
    all.points.push_back(std::move(q));
  }
}

// The predictions of one set's results for study `s`, per measurement.
std::vector<double> predictions(const Study& s, std::vector<PointResult> results)
{
  for (std::size_t k = 0; k < results.size(); ++k)
    results[k].index = s.ex.points[k].index;
  const Comparison c = compare(s.ex, results, s.measurements, s.measurements_file);
  if (!c.missing.empty())
    throw InputError(missing_metric_message(s.ex, c.missing.front(), s.measurements_file));
  std::vector<double> out(s.measurements.size(), std::numeric_limits<double>::quiet_NaN());
  for (const ComparisonRow& r : c.rows)
    out.at(static_cast<std::size_t>(r.m - s.measurements.data())) = r.predicted;
  return out;
}

} // namespace

std::vector<std::vector<double>> Evaluator::run(const std::vector<CostValues>& sets, unsigned iterations,
                                                unsigned shrink)
{
  const auto t0 = std::chrono::steady_clock::now();
  // Every set's points of every study in one pool: set by set, study by
  // study, so that each set's rows come out in the input's row order.
  Experiment all;
  all.name = in_.study().ex.name;
  for (const CostValues& set : sets)
    for (const Study& s : in_.studies)
      append_points(all, s.ex, set, iterations, shrink);
  RunOptions o = hooks_.run;
  o.progress = false;
  o.on_point = nullptr;
  std::vector<PointResult> results = run_points(all, hooks_.iteration, o);
  std::vector<std::vector<double>> out;
  auto next = results.begin();
  for (std::size_t k = 0; k < sets.size(); ++k) {
    out.emplace_back();
    for (const Study& s : in_.studies) {
      const auto end = next + static_cast<std::ptrdiff_t>(s.ex.points.size());
      const std::vector<double> p =
          predictions(s, std::vector<PointResult>(std::make_move_iterator(next), std::make_move_iterator(end)));
      out.back().insert(out.back().end(), p.begin(), p.end());
      next = end;
    }
  }
  evaluations_ += static_cast<unsigned>(sets.size());
  // One iteration set: every point of every study once.
  double runs = 0, points = 0;
  for (const Study& s : in_.studies) {
    points += static_cast<double>(s.ex.points.size());
    runs += static_cast<double>(s.ex.points.size()) *
            (iterations > 0 ? iterations : static_cast<double>(s.ex.base.integer("iterations")));
  }
  iteration_sets_ += static_cast<double>(sets.size()) * runs / points / std::max(1u, shrink);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

} // namespace vsim::app
