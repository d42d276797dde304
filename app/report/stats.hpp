// Statistics over the iterations of the points of a run.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/run/runner.hpp"

namespace vsim::app {

struct Stats {
  double min, max, mean, median; // median of an even count: mean of the two middle values
};

// Throws std::invalid_argument on an empty list or a NaN value. The result does
// not depend on the order of the values.
Stats summarize(std::vector<double> values);

// Every metric name any iteration of the results carries, sorted.
std::set<std::string> metric_names(const std::vector<PointResult>& results);

// Metric name -> values over the iterations that report it, in iteration order.
std::map<std::string, std::vector<double>> metric_values(const PointResult& r);

// Throws std::invalid_argument unless `results` holds one PointResult per
// point of ex.points, in the same order.
void check_results(const Experiment& ex, const std::vector<PointResult>& results);

// Iterations of the point whose figures were extrapolated from the steady
// state (sim.run_length: auto).
std::size_t extrapolated_iterations(const PointResult& r);

} // namespace vsim::app
