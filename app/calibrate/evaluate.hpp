// One evaluation of a calibration: every point of the experiment run with a
// set of cost values, every row's prediction. Several sets run in one pool of
// jobs (the sensitivity analysis, the final comparisons), so no job idles
// while the slowest point of one set finishes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/calibrate/calibrate.hpp"

namespace vsim::app {

// Cost name (without "costs.") -> value; the costs not named keep the
// experiment's values.
using CostValues = std::map<std::string, double>;

class Evaluator {
public:
  Evaluator(const CalibrationInput& in, const CalibrateHooks& hooks);

  // Per set, per measurement, the prediction (NaN for a row whose point
  // failed). `iterations` per point: 0 for the experiment's own. `shrink`
  // divides every point's workload.total_bytes (never below one message):
  // a cheaper, rougher evaluation.
  std::vector<std::vector<double>> run(const std::vector<CostValues>& sets, unsigned iterations, unsigned shrink = 1);

  unsigned evaluations() const { return evaluations_; }
  // Wall seconds per evaluation with one iteration per point, as measured so
  // far (0 before the first).
  double seconds_per_iteration_set() const;

private:
  const CalibrationInput& in_;
  const CalibrateHooks& hooks_;
  unsigned evaluations_ = 0;
  double seconds_ = 0;        // spent in run()
  double iteration_sets_ = 0; // evaluations run, times their iterations per point, over shrink
};

} // namespace vsim::app
